"""The capture stream end to end: the official MCP client against ``zm serve`` and ``zm mcp``, on SQLite and
PostgreSQL, with a fake OpenAI-compatible server on 127.0.0.1 as the extraction model and the judge.

The fake server logs every request it receives; that log is how these tests know what reached a model.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from mcp.client.client import Client

from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.server import RecordedRequest, Reply
from tests.mcp.helpers import Deployment, base_env, call_error, call_ok, connect, start_server, stop_server, unique, zm
from tests.pg import session_server
from zero_memory.domain.records import CaptureChunk, ChunkStatus
from zero_memory.store import Store, open_store, system_tx

pytestmark = pytest.mark.anyio

VIAS = [pytest.param(("http", "auto"), id="http"), pytest.param(("stdio", "legacy"), id="stdio")]
SETTLE_S = 120
TOKEN = "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa"


@dataclass
class Model:
    """What the fake model answers: statements keyed by a marker in the chunk, broken answers counted down."""

    statements: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    broken: dict[str, int] = field(default_factory=dict)
    verdicts: dict[str, tuple[str, float]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, request: RecordedRequest) -> Reply:
        schema = FakeOpenAIServer.schema_name(request)
        text = FakeOpenAIServer.user_message(request)
        if schema == "portability_verdict":
            return FakeOpenAIServer.portability(False, 0.9, "Specific to the project.")
        if schema == "hygiene_verdict":
            for marker, (verdict, confidence) in self.verdicts.items():
                if marker in text:
                    return FakeOpenAIServer.verdict(verdict, confidence, "Both cannot be true.")
            return FakeOpenAIServer.verdict("unrelated", 0.9, "Different subjects.")
        with self.lock:
            for marker, left in self.broken.items():
                if marker in text and left > 0:
                    self.broken[marker] = left - 1
                    return FakeOpenAIServer.completion("Sure! Here are the statements you asked for.")
        for marker, said in self.statements.items():
            if marker in text:
                return FakeOpenAIServer.statements(said)
        return FakeOpenAIServer.statements([])


@dataclass
class Captured:
    deployment: Deployment
    server: FakeOpenAIServer
    model: Model
    store: Store

    def extraction_requests(self) -> list[RecordedRequest]:
        return [r for r in self.server.requests if FakeOpenAIServer.schema_name(r) == "extracted_statements"]

    def chunk(self, chunk_id: str) -> CaptureChunk:
        with system_tx(self.store, "test") as tx:
            found = tx.get_chunk(chunk_id)
        assert found is not None
        return found

    def settled(self, chunk_id: str, *, attempts: int = 0) -> CaptureChunk:
        """The chunk once its extraction is done or given up (or has failed ``attempts`` times)."""
        deadline = time.monotonic() + SETTLE_S
        while time.monotonic() < deadline:
            found = self.chunk(chunk_id)
            finished = found.status in (ChunkStatus.DONE, ChunkStatus.FAILED)
            if finished or (attempts and found.attempts >= attempts):
                return found
            time.sleep(0.1)
        raise AssertionError(f"chunk {chunk_id} was not extracted within {SETTLE_S} s: {self.chunk(chunk_id)}")


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def captured(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Captured]:
    home = tmp_path_factory.mktemp(f"zm-capture-{request.param}")
    model = Model()
    with FakeOpenAIServer() as server:
        server.respond_with(model.answer)
        env = {
            **base_env(home),
            "ZM_JUDGE_PROVIDER": "openai",
            "ZM_JUDGE_BASE_URL": server.base_url,
            "ZM_JUDGE_API_KEY": "sk-test-key-for-the-fake",
            "ZM_HYGIENE_MODEL": "judge-strong",
            "ZM_HYGIENE_FAST_MODEL": "judge-fast",
            "ZM_EXTRACT_MODEL": "extractor",
            "ZM_JUDGE_TIMEOUT_S": "10",
            "ZM_EXTRACT_RETRY_SECONDS": "1",
        }
        url = None
        if request.param == "postgres":
            url = session_server().fresh_url()
            env["ZM_DATABASE_URL"] = url
        tokens = {name: json.loads(zm(env, "user", "add", name, "--json").stdout)["token"] for name in ("alice", "bob")}
        deployment = Deployment(home=home, env=env, tokens=tokens)
        process, served = start_server(env, home / "serve.log")
        deployment.url, deployment.log = served, home / "serve.log"
        store = open_store(url or f"sqlite:///{deployment.database}")
        try:
            yield Captured(deployment, server, model, store)
        finally:
            store.close()
            stop_server(process)
            if url is not None:
                session_server().drop(url)


@pytest.fixture(params=VIAS)
async def client(captured: Captured, request: pytest.FixtureRequest) -> Any:
    transport, mode = request.param
    async with connect(captured.deployment, transport, mode) as connected:
        yield connected


def chunk_of(tag: str, *lines: str) -> str:
    return "".join(f"{line} {tag}\n\n" for line in lines)


def project_of(captured: Captured, tag: str) -> str:
    return str(captured.deployment.home / "src" / tag.strip("[]").replace(" ", ""))


async def ingest(client: Client, captured: Captured, chunk: str, tag: str, **extra: Any) -> dict[str, Any]:
    arguments = {
        "transcript_chunk": chunk,
        "conversation_id": f"conv-{tag}",
        "project_hint": project_of(captured, tag),
        **extra,
    }
    return await call_ok(client, "ingest_conversation", arguments)


def live_in(captured: Captured, scope: str) -> list[Any]:
    with system_tx(captured.store, "test") as tx:
        return tx.live_memories(scope_prefix=scope)


async def test_a_chunk_becomes_provisional_memories_in_the_sessions_project_once(
    client: Client, captured: Captured
) -> None:
    tag = unique()
    said = [
        {"content": f"The api deploys with `make ship` {tag}.", "kind": "convention", "scope_hint": "project"},
        {"content": f"Staging deploys only happen from main {tag}.", "kind": "decision", "scope_hint": "project"},
    ]
    captured.model.statements[tag] = said
    chunk = chunk_of(tag, "user: how do we deploy?", "assistant: make ship, and only from main.")
    accepted = await ingest(client, captured, chunk, tag)
    assert accepted["status"] == "accepted" and accepted["extraction"] in ("pending", "extracting", "done")
    done = captured.settled(accepted["chunk_id"])
    assert (done.status, done.created, done.transcript) == (ChunkStatus.DONE, 2, None)

    memories = live_in(captured, accepted["scope"])
    assert sorted(m.content for m in memories) == sorted(s["content"] for s in said)
    for memory in memories:
        view = await call_ok(client, "get_memory", {"id": memory.id})
        assert view["memory"]["rank"] == 0 and view["memory"]["agent_name"] == "extraction"
        assert view["memory"]["source"]["conversation_id"] == f"conv-{tag}"
        assert view["memory"]["source"]["chunk_hash"] == accepted["chunk_hash"]
    [sent] = [r for r in captured.extraction_requests() if tag in FakeOpenAIServer.user_message(r)]
    assert sent.body["model"] == "extractor"
    with system_tx(captured.store, "test") as tx:
        extracts = [row for row in tx.ledger(owner="alice") if row["purpose"] == "extract"]
    assert extracts and {row["model"] for row in extracts} == {"extractor"}, "every call is on the owner's ledger"

    again = await ingest(client, captured, chunk, tag)
    assert (again["status"], again["chunk_id"], again["extraction"]) == ("duplicate", accepted["chunk_id"], "done")
    assert len([r for r in captured.extraction_requests() if tag in FakeOpenAIServer.user_message(r)]) == 1
    assert len(live_in(captured, accepted["scope"])) == 2


async def test_with_no_project_hint_a_chunk_goes_to_the_project_its_session_attached_to(
    client: Client, captured: Captured
) -> None:
    tag = unique()
    repo = captured.deployment.home / "repos" / tag.strip("[]").replace(" ", "")
    (repo / ".git").mkdir(parents=True)
    # The agent's session is the conversation a hook sends (Claude Code's session_id is both).
    session = {"project_hint": str(repo), "session_id": f"conv-{tag}"}
    briefing = await call_ok(client, "build_context", session)
    attached = briefing["session"]["attached_project"]
    assert attached
    said = [
        {"content": f"The repo's tests run with `make check` {tag}.", "kind": "convention", "scope_hint": "project"}
    ]
    captured.model.statements[tag] = said
    arguments = {"transcript_chunk": chunk_of(tag, "user: how do I test?"), "conversation_id": f"conv-{tag}"}
    accepted = await call_ok(client, "ingest_conversation", arguments)
    assert captured.settled(accepted["chunk_id"]).created == 1
    assert accepted["scope"] == attached
    [memory] = live_in(captured, attached)
    assert memory.content == said[0]["content"] and memory.rank == 0


async def test_a_chunk_restating_an_authoritative_memory_yields_to_it(client: Client, captured: Captured) -> None:
    tag = unique()
    text = f"Releases are cut from the release branch every Tuesday {tag}."
    stated = await call_ok(
        client, "remember", {"content": text, "kind": "convention", "project_hint": project_of(captured, tag)}
    )
    restated = f"Every Tuesday the team cuts a release from the release branch {tag}."
    captured.model.statements[tag] = [{"content": restated, "kind": "convention", "scope_hint": "project"}]
    accepted = await ingest(client, captured, chunk_of(tag, "user: when do we release?", "assistant: Tuesdays."), tag)
    done = captured.settled(accepted["chunk_id"])
    assert (done.statements, done.created, done.yielded) == (1, 0, 1)
    assert [m.id for m in live_in(captured, accepted["scope"])] == [stated["id"]]
    with system_tx(captured.store, "test") as tx:
        [extracted] = [a for a in tx.audit_actions("capture.extract") if a.payload.get("chunk") == done.id]
    assert extracted.memory_ids == [stated["id"]], "the chunk's audit row names the memory it yielded to"


async def test_a_contradicting_capture_is_overridden_by_the_next_cycle_without_a_queue_row(
    client: Client, captured: Captured
) -> None:
    tag = unique()
    stated = await call_ok(
        client,
        "remember",
        {
            "content": f"Releases are tagged by the release bot {tag}.",
            "kind": "fact",
            "project_hint": project_of(captured, tag),
        },
    )
    contrary = f"Tag releases by hand with git tag; there is no release bot {tag}."
    captured.model.statements[tag] = [{"content": contrary, "kind": "fact", "scope_hint": "project"}]
    captured.model.verdicts[tag] = ("contradiction", 0.93)
    accepted = await ingest(client, captured, chunk_of(tag, "user: who tags releases?", "assistant: by hand."), tag)
    assert captured.settled(accepted["chunk_id"]).created == 1
    [capture] = [m for m in live_in(captured, accepted["scope"]) if m.rank == 0]

    scan = await call_ok(client, "scan_hygiene", {"wait": True})
    assert scan["status"] == "completed" and scan["auto_resolved"] >= 1
    overridden = await call_ok(client, "get_memory", {"id": capture.id})
    assert overridden["memory"]["status"] == "invalidated"
    assert overridden["memory"]["superseded_by"] == stated["id"]
    assert (await call_ok(client, "get_memory", {"id": stated["id"]}))["memory"]["status"] == "live"
    pending = await call_ok(client, "list_conflicts", {"limit": 100})
    named = {row["memory_a"]["id"] for row in pending["conflicts"]} | {
        (row.get("memory_b") or {}).get("id") for row in pending["conflicts"]
    }
    assert capture.id not in named and stated["id"] not in named
    judged = [r for r in captured.server.requests if FakeOpenAIServer.schema_name(r) == "hygiene_verdict"]
    [pair] = [r for r in judged if tag in FakeOpenAIServer.user_message(r)]
    assert pair.body["model"] == "judge-fast", "a pair with a capture goes to the fast model"


async def test_a_broken_extraction_answer_stores_nothing_and_is_retried(client: Client, captured: Captured) -> None:
    tag = unique()
    captured.model.broken[tag] = 1
    captured.model.statements[tag] = [
        {"content": f"The build cache lives in .cache/build {tag}.", "kind": "fact", "scope_hint": "project"}
    ]
    accepted = await ingest(client, captured, chunk_of(tag, "user: where is the cache?", "assistant: .cache"), tag)
    failed_once = captured.settled(accepted["chunk_id"], attempts=1)
    assert failed_once.last_error is not None and failed_once.last_error.startswith("malformed")

    done = captured.settled(accepted["chunk_id"])
    assert done.status is ChunkStatus.DONE and done.attempts == 1 and done.created == 1
    asked = [r for r in captured.extraction_requests() if tag in FakeOpenAIServer.user_message(r)]
    assert len(asked) == 2
    assert [m.content for m in live_in(captured, accepted["scope"])] == [
        f"The build cache lives in .cache/build {tag}."
    ]


async def test_a_chunk_with_a_token_is_refused_and_nothing_of_it_reaches_the_model(
    client: Client, captured: Captured
) -> None:
    tag = unique()
    chunk = chunk_of(tag, f"user: the deploy token is {TOKEN}", "assistant: I will use it.")
    error = await call_error(
        client,
        "ingest_conversation",
        {"transcript_chunk": chunk, "conversation_id": f"conv-{tag}", "project_hint": project_of(captured, tag)},
    )
    assert error.startswith("validation_failed: secret_content_rejected: transcript_chunk github_token")
    assert TOKEN not in error
    assert not any(TOKEN in r.raw.decode("utf-8", "replace") for r in captured.server.requests)
    assert not any(tag in r.raw.decode("utf-8", "replace") for r in captured.server.requests)
    # Nothing was staged, so nothing is left to send later either.
    with system_tx(captured.store, "test") as tx:
        assert not any(c.conversation_id == f"conv-{tag}" for c in tx.list_chunks(owner="alice", limit=1000))


async def test_an_owner_over_budget_gets_budget_exhausted_and_everything_else_works(captured: Captured) -> None:
    zm(captured.deployment.env, "user", "budget", "set", "0", "--user", "bob")
    tag = unique()
    try:
        for transport, mode in (("http", "auto"), ("stdio", "legacy")):
            async with connect(captured.deployment, transport, mode, user="bob") as client:
                error = await call_error(
                    client,
                    "ingest_conversation",
                    {
                        "transcript_chunk": f"user: anything {tag}\n",
                        "conversation_id": "c",
                        "project_hint": project_of(captured, tag),
                    },
                )
                assert error.startswith("unavailable: budget_exhausted: today's extraction allowance of 0 tokens")
                written = await call_ok(
                    client,
                    "remember",
                    {"content": f"Bob's note {transport} {tag}", "kind": "fact", "scope": "personal"},
                )
                found = await call_ok(client, "recall", {"query": f"Bob's note {transport} {tag}", "scopes": ["*"]})
                assert written["id"] in [h["id"] for h in found["hits"]]
                assert (await call_ok(client, "get_memory", {"id": written["id"]}))["memory"]["id"] == written["id"]
                assert (await call_ok(client, "scan_hygiene", {"wait": True}))["status"] == "completed"
        assert not any(tag in r.raw.decode("utf-8", "replace") for r in captured.extraction_requests())
    finally:
        zm(captured.deployment.env, "user", "budget", "clear", "--user", "bob")
