// Drives zero-memory with the TypeScript MCP SDK and prints one JSON report on stdout.
//
//   ZM_JS_TRANSPORT=stdio ZM_BIN=/path/to/zm node client.mjs      (ZM_HOME, ZM_USER, PATH, HOME are passed on)
//   ZM_JS_TRANSPORT=http ZM_JS_URL=http://127.0.0.1:PORT/mcp ZM_JS_TOKEN=zm_... node client.mjs
//
// Run by tests/mcp/test_js_client.py, which checks the report.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const env = process.env;
const kind = env.ZM_JS_TRANSPORT;
const tag = env.ZM_JS_TAG ?? `t${Date.now()}`;

function transport() {
  if (kind === "stdio") {
    const passed = Object.fromEntries(
      ["PATH", "HOME", "ZM_HOME", "ZM_USER", "LANG"].filter((k) => env[k] !== undefined).map((k) => [k, env[k]]),
    );
    // Started where the user's data lives, not in this checkout: a stdio server attaches to the repository
    // it is started in, and the test's memories belong in the user's personal scope.
    return new StdioClientTransport({
      command: env.ZM_BIN,
      args: ["mcp"],
      env: passed,
      cwd: env.ZM_JS_CWD,
      stderr: "ignore",
    });
  }
  return new StreamableHTTPClientTransport(new URL(env.ZM_JS_URL), {
    requestInit: { headers: { Authorization: `Bearer ${env.ZM_JS_TOKEN}` } },
  });
}

const textOf = (result) => result.content.filter((c) => c.type === "text").map((c) => c.text).join("");

const client = new Client({ name: "ts-sdk-test", version: "1.0.0" });
await client.connect(transport());
const report = { server: client.getServerVersion() };

const { tools } = await client.listTools();
report.tools = tools.map((t) => t.name);
const recallTool = tools.find((t) => t.name === "recall");
report.recallAnnotations = recallTool.annotations;
report.recallHasOutputSchema = Boolean(recallTool.outputSchema);

const written = await client.callTool({
  name: "remember",
  arguments: { content: `The TypeScript client can write memories [${tag}]`, kind: "fact", scope: "personal" },
});
report.remember = { isError: Boolean(written.isError), structured: written.structuredContent, text: textOf(written) };

const recalled = await client.callTool({
  name: "recall",
  arguments: { query: `TypeScript client memories ${tag}`, scopes: ["personal"], limit: 5 },
});
report.recall = {
  isError: Boolean(recalled.isError),
  ids: recalled.structuredContent.hits.map((h) => h.id),
  links: recalled.content.filter((c) => c.type === "resource_link").map((c) => c.uri),
};

const resource = await client.readResource({ uri: `zm://memory/${written.structuredContent.id}` });
report.resource = JSON.parse(resource.contents[0].text).memory.agent_name;

const task = await client.callTool({
  name: "remember",
  arguments: { content: `Port the TypeScript client checks [${tag}]`, kind: "task", project_hint: `/work/js/${tag}` },
});
const briefing = await client.callTool({
  name: "build_context",
  arguments: { project_hint: `/work/js/${tag}`, topic: "TypeScript client", session_id: `js-${tag}` },
});
report.buildContext = {
  isError: Boolean(briefing.isError),
  structured: briefing.structuredContent,
  text: textOf(briefing),
  taskId: task.structuredContent.id,
};

const refusals = {};
for (const [name, args] of [
  ["unknown_argument", { name: "recall", arguments: { query: "q", bogus: 1 } }],
  ["wrong_type", { name: "recall", arguments: { query: "q", limit: "7" } }],
  ["unknown_kind", { name: "remember", arguments: { content: "x", kind: "rumour", scope: "personal" } }],
  ["not_found", { name: "get_memory", arguments: { id: "mem_01zzzzzzzzzzzzzzzzzzzzzzzz" } }],
]) {
  const result = await client.callTool(args);
  refusals[name] = { isError: Boolean(result.isError), text: textOf(result) };
}
report.refusals = refusals;

await client.close();
process.stdout.write(JSON.stringify(report) + "\n");
