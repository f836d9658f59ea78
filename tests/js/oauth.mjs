// The TypeScript MCP SDK's OAuth client against zm serve: discovery, registration, PKCE, the code exchange,
// tool calls with the issued token, refresh rotation, and the server's refusals. Prints JSON lines:
//
//   {"authorize": URL}        the user's browser must open URL; the test answers on stdin with the URL the
//                             server finally redirected to (the client's redirect URI with ?code=&state=)
//   {"revoke": CLIENT_ID}     the test revokes the client's grant (zm user oauth revoke) and answers "ok"
//   {"report": {...}}         the last line: what happened, checked by tests/mcp/test_js_oauth.py
//
//   ZM_JS_URL=http://127.0.0.1:PORT/mcp                 the server, default lifetimes
//   ZM_JS_SHORT_CODE_URL=http://127.0.0.1:PORT2/mcp     a server whose codes last 1 s
//   ZM_JS_SHORT_ACCESS_URL=http://127.0.0.1:PORT3/mcp   a server whose access tokens last 1 s
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  UnauthorizedError,
  discoverAuthorizationServerMetadata,
  exchangeAuthorization,
  refreshAuthorization,
  registerClient,
  startAuthorization,
} from "@modelcontextprotocol/sdk/client/auth.js";

const env = process.env;
const REDIRECT = "http://127.0.0.1:53682/callback";
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const say = (message) => process.stdout.write(JSON.stringify(message) + "\n");
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function ask(message) {
  say(message);
  const { value, done } = await lines.next();
  if (done) throw new Error("the test closed stdin");
  return value.trim();
}

// The user's browser: the test opens the URL, signs in, approves, and hands back where the server sent it.
async function userApproves(authorizationUrl) {
  const landed = new URL(await ask({ authorize: String(authorizationUrl) }));
  return { code: landed.searchParams.get("code"), state: landed.searchParams.get("state"), error: landed.searchParams.get("error") };
}

// An OAuthClientProvider that keeps everything in memory, as a CLI client would for one run.
class MemoryProvider {
  constructor(name) {
    this.name = name;
    this.saved = {};
    this.landed = null;
  }
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata() {
    return { client_name: this.name, redirect_uris: [REDIRECT], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"] };
  }
  state() {
    return `state-${Math.random().toString(36).slice(2)}`;
  }
  clientInformation() {
    return this.saved.client;
  }
  saveClientInformation(info) {
    this.saved.client = info;
  }
  tokens() {
    return this.saved.tokens;
  }
  saveTokens(tokens) {
    this.saved.tokens = tokens;
  }
  saveCodeVerifier(verifier) {
    this.saved.verifier = verifier;
  }
  codeVerifier() {
    return this.saved.verifier;
  }
  async redirectToAuthorization(url) {
    this.authorizationUrl = String(url);
    this.landed = await userApproves(url);
  }
}

const errorOf = (e) => ({ name: e?.constructor?.name ?? "Error", code: e?.errorCode ?? e?.code ?? null, message: String(e?.message ?? e) });

async function refused(work) {
  try {
    await work();
    return { refused: false };
  } catch (e) {
    return { refused: true, ...errorOf(e) };
  }
}

// The whole flow as an application runs it: connect, get a 401, authorize, finish, connect again.
async function connectWithOAuth(url, provider) {
  const first = new Client({ name: provider.name, version: "1.0.0" });
  let needed = false;
  try {
    await first.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
  } catch (e) {
    if (!(e instanceof UnauthorizedError)) throw e;
    needed = true;
  }
  if (needed) {
    if (!provider.landed?.code) throw new Error(`no code came back: ${JSON.stringify(provider.landed)}`);
    const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
    await transport.finishAuth(provider.landed.code);
    const client = new Client({ name: provider.name, version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
    return { client, needed };
  }
  return { client: first, needed };
}

// A connection with a fixed bearer token and no way to renew it: does the server take the token?
async function connectsWith(url, token) {
  const client = new Client({ name: "fixed-token", version: "1.0.0" });
  try {
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
    );
    await client.listTools();
    await client.close();
    return { ok: true };
  } catch (e) {
    return { ok: false, ...errorOf(e) };
  }
}

// A fresh registration and one approved code, driven with the SDK's own building blocks.
async function approvedCode(url, name) {
  const issuer = new URL(url).origin;
  const metadata = await discoverAuthorizationServerMetadata(issuer);
  const client = await registerClient(issuer, {
    metadata,
    clientMetadata: { client_name: name, redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" },
  });
  const { authorizationUrl, codeVerifier } = await startAuthorization(issuer, {
    metadata,
    clientInformation: client,
    redirectUrl: REDIRECT,
    state: "s1",
    resource: new URL(url),
  });
  const landed = await userApproves(authorizationUrl);
  return { issuer, metadata, client, codeVerifier, code: landed.code, landed };
}

const tag = env.ZM_JS_TAG ?? `t${Date.now()}`;
const textOf = (result) => result.content.filter((c) => c.type === "text").map((c) => c.text).join("");
const report = {};

// 1. The full flow, then tools with the issued token.
const provider = new MemoryProvider("ts-sdk-oauth");
const { client, needed } = await connectWithOAuth(env.ZM_JS_URL, provider);
report.flow = {
  needed,
  authorizationUrl: provider.authorizationUrl,
  state: provider.landed.state,
  tokens: provider.saved.tokens,
  client: { client_id: provider.saved.client.client_id, method: provider.saved.client.token_endpoint_auth_method },
};
report.tools = (await client.listTools()).tools.map((t) => t.name);
const written = await client.callTool({
  name: "remember",
  arguments: { content: `Written through an OAuth token [${tag}]`, kind: "fact", scope: "personal" },
});
report.remember = { isError: Boolean(written.isError), structured: written.structuredContent, text: textOf(written) };
const recalled = await client.callTool({ name: "recall", arguments: { query: `OAuth token ${tag}`, scopes: ["personal"] } });
report.recall = recalled.structuredContent.hits.map((h) => h.id);
await client.close();

// 2. A stale access token with a live refresh token: the SDK refreshes by itself and carries on.
provider.saved.tokens = { ...provider.saved.tokens, access_token: "zmat_0000000000000000_stale" };
const again = new Client({ name: "ts-sdk-oauth", version: "1.0.0" });
await again.connect(new StreamableHTTPClientTransport(new URL(env.ZM_JS_URL), { authProvider: provider }));
report.autoRefresh = { tools: (await again.listTools()).tools.length, rotated: provider.saved.tokens.refresh_token !== report.flow.tokens.refresh_token };
await again.close();

// 3. Refusals at /authorize and /token.
const issuer = new URL(env.ZM_JS_URL).origin;
const metadata = await discoverAuthorizationServerMetadata(issuer);
report.metadata = metadata;
{
  const { authorizationUrl } = await startAuthorization(issuer, {
    metadata,
    clientInformation: provider.saved.client,
    redirectUrl: "http://127.0.0.1:53682/elsewhere",
    resource: new URL(env.ZM_JS_URL),
  });
  const answer = await fetch(authorizationUrl, { redirect: "manual" });
  report.wrongRedirect = { status: answer.status, location: answer.headers.get("location"), body: await answer.text() };
}
{
  const pkce = await approvedCode(env.ZM_JS_URL, "ts-sdk-pkce");
  const exchange = (codeVerifier) =>
    exchangeAuthorization(pkce.issuer, {
      metadata: pkce.metadata,
      clientInformation: pkce.client,
      authorizationCode: pkce.code,
      codeVerifier,
      redirectUri: REDIRECT,
      resource: new URL(env.ZM_JS_URL),
    });
  report.wrongVerifier = await refused(() => exchange("a-verifier-that-was-never-challenged-aaaaaaaaaaaaaaaaaaaaa"));
  const missing = await fetch(pkce.metadata.token_endpoint, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "authorization_code", code: pkce.code, redirect_uri: REDIRECT, client_id: pkce.client.client_id }),
  });
  report.missingVerifier = { status: missing.status, body: await missing.json() };
  const tokens = await exchange(pkce.codeVerifier);
  report.rightVerifier = { ok: Boolean(tokens.access_token), connects: await connectsWith(env.ZM_JS_URL, tokens.access_token) };
  report.reusedCode = await refused(() => exchange(pkce.codeVerifier));
  report.afterReuse = await connectsWith(env.ZM_JS_URL, tokens.access_token);
}
{
  // 4. Refresh rotation: each refresh token works once; a second use revokes the grant.
  const rotating = await approvedCode(env.ZM_JS_URL, "ts-sdk-rotation");
  const first = await exchangeAuthorization(rotating.issuer, {
    metadata: rotating.metadata,
    clientInformation: rotating.client,
    authorizationCode: rotating.code,
    codeVerifier: rotating.codeVerifier,
    redirectUri: REDIRECT,
    resource: new URL(env.ZM_JS_URL),
  });
  const refresh = (refreshToken) =>
    refreshAuthorization(rotating.issuer, { metadata: rotating.metadata, clientInformation: rotating.client, refreshToken, resource: new URL(env.ZM_JS_URL) });
  const second = await refresh(first.refresh_token);
  report.refreshOnce = { rotated: second.refresh_token !== first.refresh_token, connects: await connectsWith(env.ZM_JS_URL, second.access_token) };
  report.refreshTwice = await refused(() => refresh(first.refresh_token));
  report.afterRefreshReplay = {
    newest: await refused(() => refresh(second.refresh_token)),
    access: await connectsWith(env.ZM_JS_URL, second.access_token),
  };
}
{
  // 5. Revoked by the user (the test runs zm user oauth revoke): the tokens stop working.
  const revoking = await approvedCode(env.ZM_JS_URL, "ts-sdk-revoked");
  const tokens = await exchangeAuthorization(revoking.issuer, {
    metadata: revoking.metadata,
    clientInformation: revoking.client,
    authorizationCode: revoking.code,
    codeVerifier: revoking.codeVerifier,
    redirectUri: REDIRECT,
    resource: new URL(env.ZM_JS_URL),
  });
  const before = await connectsWith(env.ZM_JS_URL, tokens.access_token);
  await ask({ revoke: revoking.client.client_id });
  report.revoked = {
    before,
    access: await connectsWith(env.ZM_JS_URL, tokens.access_token),
    refresh: await refused(() =>
      refreshAuthorization(revoking.issuer, {
        metadata: revoking.metadata,
        clientInformation: revoking.client,
        refreshToken: tokens.refresh_token,
        resource: new URL(env.ZM_JS_URL),
      }),
    ),
  };
}
if (env.ZM_JS_SHORT_CODE_URL) {
  // 6. A code exchanged after it expired (this server's codes last 1 s).
  const late = await approvedCode(env.ZM_JS_SHORT_CODE_URL, "ts-sdk-late");
  await pause(2500);
  report.expiredCode = await refused(() =>
    exchangeAuthorization(late.issuer, {
      metadata: late.metadata,
      clientInformation: late.client,
      authorizationCode: late.code,
      codeVerifier: late.codeVerifier,
      redirectUri: REDIRECT,
      resource: new URL(env.ZM_JS_SHORT_CODE_URL),
    }),
  );
}
if (env.ZM_JS_SHORT_ACCESS_URL) {
  // 7. An access token used after it expired (this server's access tokens last 1 s); its refresh token still works.
  const brief = await approvedCode(env.ZM_JS_SHORT_ACCESS_URL, "ts-sdk-brief");
  const tokens = await exchangeAuthorization(brief.issuer, {
    metadata: brief.metadata,
    clientInformation: brief.client,
    authorizationCode: brief.code,
    codeVerifier: brief.codeVerifier,
    redirectUri: REDIRECT,
    resource: new URL(env.ZM_JS_SHORT_ACCESS_URL),
  });
  await pause(2500);
  const renewed = await refused(() =>
    refreshAuthorization(brief.issuer, {
      metadata: brief.metadata,
      clientInformation: brief.client,
      refreshToken: tokens.refresh_token,
      resource: new URL(env.ZM_JS_SHORT_ACCESS_URL),
    }),
  );
  report.expiredAccess = { expiresIn: tokens.expires_in, access: await connectsWith(env.ZM_JS_SHORT_ACCESS_URL, tokens.access_token), refresh: renewed };
}

say({ report });
process.exit(0);
