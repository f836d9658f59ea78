"""No secret in any log, error, answer or file: one deployment run through every flow that carries one.

``zm serve`` (bound to 0.0.0.0, so it also prints its TLS warning) and every
``zm`` command run with Python logging at DEBUG — the SDKs (openai, httpx,
mcp, uvicorn) log requests at that level. The flows carry each kind of
secret: bearer tokens (issued, used, revoked, forged), OAuth client secrets,
codes, access and refresh tokens (issued, replayed, revoked), an owner's provider
key (stored with ``zm user key set``, sent to a fake provider that echoes it
back in its 401), the server's judge key and ``ZM_SECRET_KEY``, and
credentials inside memories, reasons and hints (all refused). Then
everything is searched: the server's output, every command's stdout and
stderr, every tool answer, every HTTP answer, and every file of the data
directory (the database, its WAL and shared memory).

Deliberately shown, and so not searched: the token ``zm user add`` and
``zm user token`` print once on stdout, and the one-time dashboard link
``zm serve`` prints (single use, 15 minutes, held in that process's memory).
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from tests.badinput.snapshot import changed, snapshot
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.server import RecordedRequest, Reply
from tests.mcp.helpers import (
    Deployment,
    base_env,
    call_error,
    call_ok,
    connect,
    free_port,
    stop_server,
    wait_for_health,
)
from tests.mcp.oauth_flow import Browser, OAuthClient, mcp_status
from zero_memory.store import open_store, system_tx

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

# Runs ``zm ARGS`` with the root logger at DEBUG on stderr: what an operator gets with debug logging on.
DEBUG_ZM = (
    "import logging, sys; logging.basicConfig(level=logging.DEBUG, stream=sys.stderr); "
    "from zero_memory.cli.main import main; sys.argv = ['zm', *sys.argv[1:]]; main()"
)

PROVIDER_KEY = "sk-owner-" + secrets.token_urlsafe(24)
SERVER_KEY = "sk-server-" + secrets.token_urlsafe(24)
SECRET_KEY = secrets.token_urlsafe(32)
GITHUB_TOKEN = "ghp_" + "Zq9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa98"
AWS_KEY_ID = "AKIA" + "Q5W4E3R2T1Y6U7I8"
DB_PASSWORD = "hunter2-" + secrets.token_hex(6)


@dataclass
class Transcript:
    """Everything a person or a log could see, and the secrets that must be in none of it."""

    home: Path
    env: dict[str, str]
    provider: FakeOpenAIServer
    secrets: dict[str, str] = field(default_factory=dict)
    seen: dict[str, str] = field(default_factory=dict)

    def zm(self, label: str, *args: str, stdin: str | None = None, shown: str | None = None) -> tuple[int, str, str]:
        """``zm ARGS`` at debug level; its stdout and stderr are searched (less ``shown``, printed by design)."""
        done = subprocess.run(
            [sys.executable, "-c", DEBUG_ZM, *args],
            env=self.env,
            input=stdin,
            text=True,
            capture_output=True,
            timeout=120,
            check=False,
        )
        out = done.stdout.replace(shown, "<shown once>") if shown else done.stdout
        self.seen[f"zm {label} stdout"] = out
        self.seen[f"zm {label} stderr"] = done.stderr
        return done.returncode, done.stdout, done.stderr


def echo_the_key(request: RecordedRequest) -> Reply:
    """A provider that rejects the key it got and quotes it back, as OpenAI's 401 does."""
    return FakeOpenAIServer.error(401, f"Incorrect API key provided: {request.api_key}. You can find your key at …")


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def transcript(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Transcript]:
    home = tmp_path_factory.mktemp("zm-secrets")
    with FakeOpenAIServer() as provider:
        provider.respond_with(echo_the_key)
        env = {
            **base_env(home),
            "ZM_SECRET_KEY": SECRET_KEY,
            "ZM_JUDGE_PROVIDER": "openai",
            "ZM_JUDGE_BASE_URL": provider.base_url,
            "ZM_JUDGE_API_KEY": SERVER_KEY,
            "ZM_JUDGE_TIMEOUT_S": "5",
        }
        kept = {
            "provider key": PROVIDER_KEY,
            "server judge key": SERVER_KEY,
            "ZM_SECRET_KEY": SECRET_KEY,
            "GitHub token": GITHUB_TOKEN,
            "AWS key id": AWS_KEY_ID,
            "database password": DB_PASSWORD,
        }
        record = Transcript(home, env, provider, secrets=kept)
        yield record


def issue(transcript: Transcript, name: str, command: str = "add", *options: str) -> str:
    """``zm user add|token NAME --json``: the token it prints once becomes a secret to look for everywhere else."""
    label = f"user {command} {name}"
    code, out, err = transcript.zm(label, "user", command, *options, name, "--json")
    assert code == 0, err
    token: str = json.loads(out)["token"]
    transcript.seen[f"zm {label} stdout"] = out.replace(token, "<shown once>")
    transcript.secrets[f"{label} token"] = token
    transcript.secrets[f"{label} token secret"] = token.removeprefix("zm_").partition("_")[2]
    return token


@dataclass
class Served:
    url: str
    output: Path
    tokens: dict[str, str]


@pytest.fixture(scope="module")
def served(transcript: Transcript) -> Iterator[Served]:
    tokens = {"alice": issue(transcript, "alice"), "bob": issue(transcript, "bob")}
    revoked = tokens["bob"]
    tokens["bob"] = issue(transcript, "bob", "token", "--revoke-others")
    tokens["revoked"] = revoked
    code, out, err = transcript.zm(
        "user key set", "user", "key", "set", "--user", "alice", "--provider", "openai", stdin=PROVIDER_KEY
    )
    assert code == 0, err
    code, out, _ = transcript.zm("user key show", "user", "key", "show", "--user", "alice", "--provider", "openai")
    assert code == 0 and PROVIDER_KEY[-4:] in out
    code, _, err = transcript.zm(
        "remember secret", "remember", f"deploy with {GITHUB_TOKEN}", "--kind", "fact", "--scope", "personal"
    )
    assert code == 1 and err.startswith("validation_failed: secret_content_rejected:"), err

    port = free_port()
    output = transcript.home / "serve.out"
    with output.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-c", DEBUG_ZM, "serve", "--host", "0.0.0.0", "--port", str(port)],
            # The address the tests reach it at, so its OAuth server is on.
            env={**transcript.env, "ZM_PUBLIC_URL": f"http://127.0.0.1:{port}"},
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(url, process, output)
        yield Served(url, output, tokens)
    finally:
        stop_server(process)


async def test_tool_calls_that_carry_secrets_answer_without_them(served: Served, transcript: Transcript) -> None:
    deployment = Deployment(home=transcript.home, env=transcript.env, tokens=served.tokens, url=served.url)
    async with connect(deployment, "http", "auto", user="alice") as alice:
        answers = [
            await call_error(
                alice,
                "remember",
                {"content": f"The deploy token is {GITHUB_TOKEN}", "kind": "fact", "scope": "personal"},
            ),
            await call_error(
                alice,
                "remember",
                {
                    "content": "The database URL",
                    "kind": "reference",
                    "project_hint": f"postgres://app:{DB_PASSWORD}@db.internal/app",
                },
            ),
            await call_error(alice, "recall", {"query": f"where is {AWS_KEY_ID}"}),
            await call_error(alice, "get_memory", {"id": GITHUB_TOKEN}),
            await call_error(alice, "remember", {"content": "x", "kind": "fact", GITHUB_TOKEN: "as a name"}),
        ]
        for session, text in enumerate(("The staging database is green", "The staging database is blue")):
            await call_ok(
                alice,
                "remember",
                {"content": text, "kind": "fact", "scope": "personal", "session_id": f"leaks-{session}"},
            )
        written = await call_ok(
            alice, "remember", {"content": "The release runs on Fridays", "kind": "fact", "scope": "personal"}
        )
        answers.append(await call_error(alice, "forget", {"id": written["id"], "reason": f"leaked {AWS_KEY_ID}"}))
        answers.append(
            await call_error(
                alice, "challenge", {"memory_id": written["id"], "reason": f"the key {GITHUB_TOKEN} rotated"}
            )
        )
        scan = await alice.call_tool("scan_hygiene", {"wait": True})
        answers.append(json.dumps(scan.structured_content))
        answers.append("".join(getattr(block, "text", "") for block in scan.content))
    assert scan.structured_content is not None and scan.structured_content["failed_judgements"] >= 1, (
        "the judge was called with alice's key and refused it"
    )
    for number, text in enumerate(answers):
        transcript.seen[f"tool answer {number}"] = text
    assert all(a.startswith("validation_failed: secret_content_rejected:") for a in answers[:3] + answers[5:7])


def test_refused_bearer_tokens_leave_no_trace(served: Served, transcript: Transcript) -> None:
    alice = served.tokens["alice"]
    for label, header in [
        ("revoked", f"Bearer {served.tokens['revoked']}"),
        ("right id, wrong secret", f"Bearer {alice[:-6]}abcdef"),
        ("garbage", f"Bearer {GITHUB_TOKEN}"),
    ]:
        answer = httpx.post(f"{served.url}/mcp", headers={"Authorization": header}, json={}, timeout=10)
        assert answer.status_code == 401, label
        transcript.seen[f"401 for {label}"] = answer.text + json.dumps(dict(answer.headers))


def test_every_refused_bearer_token_gets_the_same_bare_401(served: Served) -> None:
    """Missing, malformed, unknown, forged (a real id with a wrong secret), revoked: one answer, naming no one."""
    alice = served.tokens["alice"]
    answers = []
    for header in [
        None,
        "Bearer",
        "Basic YWxpY2U6eA==",
        f"Bearer {alice[:-6]}abcdef",
        "Bearer zm_000000000000_x",
        f"Bearer {served.tokens['revoked']}",
        f"Bearer {alice} {alice}",
    ]:
        answer = httpx.post(
            f"{served.url}/mcp", headers={"Authorization": header} if header else {}, json={}, timeout=10
        )
        headers = {k: v for k, v in answer.headers.items() if k not in ("date", "content-length")}
        answers.append((answer.status_code, answer.text, headers))
    assert all(a == answers[0] for a in answers), answers
    status, body, headers = answers[0]
    assert (status, body) == (401, "unauthorized")
    assert not any(name in json.dumps(headers) + body for name in ("alice", "bob"))


def test_the_dashboard_login_with_a_wrong_token_does_not_repeat_it(served: Served, transcript: Transcript) -> None:
    with httpx.Client(base_url=served.url, follow_redirects=False, timeout=10) as web:
        page = web.get("/login")
        csrf = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
        assert csrf is not None
        wrong = served.tokens["alice"][:-6] + "abcdef"
        answer = web.post("/login", data={"token": wrong, "csrf_token": csrf.group(1)})
    assert answer.status_code == 401
    assert wrong not in answer.text
    transcript.seen["dashboard login refusal"] = answer.text


def test_the_served_dashboard_sets_a_guarded_cookie_and_refuses_posts_without_csrf(
    served: Served, transcript: Transcript
) -> None:
    """The real server, not a test client: what a browser gets (tests/web/test_access.py has every route)."""
    database = transcript.home / "data" / "zm.db"
    with httpx.Client(base_url=served.url, follow_redirects=False, timeout=10) as web:
        login = web.get("/login")
        csrf = re.search(r'name="csrf_token" value="([^"]+)"', login.text)
        assert csrf is not None
        answer = web.post("/login", data={"token": served.tokens["alice"], "csrf_token": csrf.group(1)})
        assert answer.status_code == 303
        cookie = answer.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=lax" in cookie
        before = snapshot(database)
        for data in ({}, {"csrf_token": "forged"}, {"csrf_token": csrf.group(1)}):  # the pre-login token is void
            refused = web.post("/runs", data=data)
            assert refused.status_code == 403, data
        assert changed(before, snapshot(database)) == []
        assert web.get("/queue").status_code == 200, "still logged in: a refused post changes nothing"


def test_the_oauth_flow_and_its_refusals_leave_no_secret_behind(served: Served, transcript: Transcript) -> None:
    """A confidential client's secret, a code, access and refresh tokens: shown once to the client, then never.

    The answers that deliver them (registration, the consent redirect, the
    token response) are the client's by design and not searched; every
    refusal, the CLI's listing and the data directory are.
    """
    browser = Browser(served.url, served.tokens["alice"])
    client = OAuthClient(served.url, name="secrets-client")
    try:
        assert client.register(token_endpoint_auth_method="client_secret_post").status_code == 201
        assert client.secret
        code, verifier = client.code(browser)
        tokens = client.exchange(code, verifier).json()
        assert mcp_status(served.url, tokens["access_token"]) == 200
        issued = {
            "oauth client secret": client.secret,
            "oauth code": code,
            "oauth access token": tokens["access_token"],
            "oauth access token secret": tokens["access_token"].split("_", 2)[2],
            "oauth refresh token": tokens["refresh_token"],
            "oauth refresh token secret": tokens["refresh_token"].split("_", 2)[2],
        }
        transcript.secrets.update(issued)
        right_secret = client.secret
        refusals = {
            "reused code": client.exchange(code, verifier),
            "refresh after the replay revoked it": client.refresh(tokens["refresh_token"]),
        }
        client.secret = right_secret[:-1] + ("0" if right_secret[-1] != "0" else "1")
        refusals["wrong client secret"] = client.exchange(code, verifier)
        client.secret = right_secret
        refusals["a token as the grant type"] = client.token(grant_type=GITHUB_TOKEN, code=GITHUB_TOKEN)
        refusals["a token as the refresh token"] = client.refresh(GITHUB_TOKEN)
        refusals["a token as the client id"] = httpx.get(
            client.authorization_url(verifier, client_id=GITHUB_TOKEN), timeout=10
        )
        refusals["a token in the redirect uri"] = httpx.get(
            client.authorization_url(verifier, redirect_uri=f"http://127.0.0.1:53682/{GITHUB_TOKEN}"), timeout=10
        )
        refusals["a token as the resource"] = httpx.get(
            client.authorization_url(verifier, resource=f"https://{GITHUB_TOKEN}.example/mcp"), timeout=10
        )
        refusals["a token in a redirect uri at registration"] = OAuthClient(served.url).register(
            redirect_uris=[f"http://evil.example/{GITHUB_TOKEN}"]
        )
        refusals["the revoked access token"] = httpx.post(
            f"{served.url}/mcp", headers={"Authorization": f"Bearer {tokens['access_token']}"}, json={}, timeout=10
        )
    finally:
        browser.close()
    for label, answer in refusals.items():
        assert answer.status_code in (302, 400, 401), (label, answer.status_code, answer.text)
        transcript.seen[f"oauth refusal: {label}"] = answer.text + json.dumps(dict(answer.headers))
    code_, out, err = transcript.zm("user oauth list", "user", "oauth", "list", "alice", "--json")
    assert code_ == 0 and json.loads(out) == [], "the replayed code revoked the grant"
    code_, _, err = transcript.zm("user oauth revoke", "user", "oauth", "revoke", "alice", GITHUB_TOKEN)
    assert code_ == 1 and err.startswith("not_found:")


def test_the_server_warns_about_plain_http_on_every_interface(served: Served) -> None:
    printed = served.output.read_text(errors="replace")
    assert "warning: bound to 0.0.0.0" in printed and "TLS" in printed


def test_no_secret_appears_anywhere(served: Served, transcript: Transcript) -> None:
    """Last in the module: searches what every test above produced, and the data directory as it is now."""
    printed = served.output.read_text(errors="replace")
    assert "DEBUG:openai" in printed and "DEBUG:mcp" in printed, "the test must see the SDKs' debug logging"
    transcript.seen["zm serve output"] = re.sub(r"/login/[A-Za-z0-9_-]+", "/login/<shown once>", printed)
    for path in sorted(transcript.home.rglob("*")):
        if path.is_file() and path.name != "serve.out":
            transcript.seen[f"file {path.relative_to(transcript.home)}"] = path.read_bytes().decode("latin-1")
    assert any(name.endswith("zm.db-wal") for name in transcript.seen), "the test must read the write-ahead log"
    # The provider is the one party that gets the owner's key (in its header): what it was sent is searched too.
    assert transcript.provider.requests, "the judge must have been called"
    for number, request in enumerate(transcript.provider.requests):
        transcript.seen[f"provider request {number}"] = request.raw.decode()
    # What is at rest: digests of the tokens, the provider key's ciphertext — and never the plain values.
    files = "".join(text for where, text in transcript.seen.items() if where.startswith("file "))
    for name, token in transcript.secrets.items():
        if name.endswith("token secret"):
            assert hashlib.sha256(token.encode()).hexdigest() in files, "the test must read the token table"
    store = open_store(f"sqlite:///{transcript.home / 'data' / 'zm.db'}")
    try:
        with system_tx(store, "test") as tx:
            ciphertext = tx.get_provider_key("alice", "openai")
    finally:
        store.close()
    assert ciphertext is not None and ciphertext in files, "the test must read the stored key"
    leaks = [
        (secret_name, where)
        for secret_name, secret in transcript.secrets.items()
        for where, text in transcript.seen.items()
        if secret in text
    ]
    assert leaks == []
