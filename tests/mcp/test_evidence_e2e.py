"""Safeguards that hold over cycles, through the official MCP client against ``zm serve`` on SQLite and PostgreSQL.

The judge is a fake OpenAI-compatible server that answers by topic and
records every request, so a test can say the judge was never asked.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta

import pytest

from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.server import RecordedRequest, Reply
from tests.mcp.helpers import Deployment, base_env, call_ok, connect, start_server, stop_server, unique, zm
from tests.pg import session_server
from zero_memory.store import open_store, system_tx

pytestmark = pytest.mark.anyio

CONTRADICTS = "staging colour"


def judge_answer(request: RecordedRequest) -> Reply:
    if FakeOpenAIServer.schema_name(request) == "portability_verdict":
        return FakeOpenAIServer.portability(False, 0.9, "Project-specific.")
    if CONTRADICTS in FakeOpenAIServer.user_message(request):
        return FakeOpenAIServer.verdict("contradiction", 0.92, "Both cannot be the staging colour.")
    return FakeOpenAIServer.verdict("unrelated", 0.9, "Different subjects.")


@dataclass
class Served:
    deployment: Deployment
    judge: FakeOpenAIServer
    database_url: str

    def asked_about(self, text: str) -> list[RecordedRequest]:
        """The pair judgements whose prompt carried ``text``."""
        return [
            r
            for r in self.judge.requests
            if FakeOpenAIServer.schema_name(r) == "hygiene_verdict" and text in FakeOpenAIServer.user_message(r)
        ]


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.slow)])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp(f"zm-evidence-{request.param}")
    database_url = session_server().fresh_url() if request.param == "postgres" else f"sqlite:///{home / 'data/zm.db'}"
    with FakeOpenAIServer() as fake:
        fake.respond_with(judge_answer)
        env = {
            **base_env(home),
            "ZM_DATABASE_URL": database_url,
            "ZM_JUDGE_PROVIDER": "openai",
            "ZM_JUDGE_BASE_URL": fake.base_url,
            "ZM_JUDGE_API_KEY": "test-key",
            "ZM_HYGIENE_MODEL": "judge-strong",
            "ZM_JUDGE_TIMEOUT_S": "10",
        }
        tokens = {name: json.loads(zm(env, "user", "add", name, "--json").stdout)["token"] for name in ("alice", "bob")}
        deployment = Deployment(home=home, env=env, tokens=tokens)
        process, deployment.url = start_server(env, home / "serve.log")
        deployment.log = home / "serve.log"
        try:
            yield Served(deployment, fake, database_url)
        finally:
            stop_server(process)
            if request.param == "postgres":
                session_server().drop(database_url)


async def test_a_repeated_challenge_is_one_signal_and_an_upheld_memory_is_not_raised_again(served: Served) -> None:
    async with connect(served.deployment, "http", "auto") as client:
        fact = await call_ok(
            client,
            "remember",
            {"content": unique("The VPN gateway is vpn.example.internal"), "kind": "fact", "scope": "personal"},
        )
        first = await call_ok(client, "challenge", {"memory_id": fact["id"], "reason": "It moved to vpn2 last week"})
        again = await call_ok(client, "challenge", {"memory_id": fact["id"], "reason": "Still wrong"})
        assert (first["created"], again["created"], again["dispute_id"]) == (True, False, first["dispute_id"])
        trail = (await call_ok(client, "get_memory", {"id": fact["id"]}))["audit"]
        assert [a["payload"]["reason"] for a in trail if a["action"] == "challenge"] == ["It moved to vpn2 last week"]

        await call_ok(client, "resolve_conflict", {"dispute_id": first["dispute_id"], "keep_both": True})
        scan = await call_ok(client, "scan_hygiene", {"wait": True})
        assert scan["status"] == "completed"
        raised = await call_ok(client, "list_conflicts", {"verdict": "stale_suspect", "limit": 100})
        assert fact["id"] not in [row["memory_a"]["id"] for row in raised["conflicts"]]
        assert (await call_ok(client, "get_memory", {"id": fact["id"]}))["disputes"] == []


async def test_a_queued_pair_whose_sides_moved_to_different_projects_is_dismissed_without_a_judge(
    served: Served,
) -> None:
    tag = unique()
    green_text, blue_text = f"The staging colour of the database is green {tag}", f"The staging colour is blue {tag}"
    async with connect(served.deployment, "http", "auto") as client:
        written = {"kind": "fact", "project_hint": "shop"}
        green = await call_ok(client, "remember", {**written, "content": green_text, "session_id": f"{tag}-1"})
        blue = await call_ok(client, "remember", {**written, "content": blue_text, "session_id": f"{tag}-2"})
        await call_ok(client, "scan_hygiene", {"wait": True})
        queue = await call_ok(client, "list_conflicts", {"verdict": "contradiction", "limit": 100})
        pair = {green["id"], blue["id"]}
        (row,) = [r for r in queue["conflicts"] if {r["memory_a"]["id"], r["memory_b"]["id"]} == pair]
        asked = len(served.asked_about(tag))
        assert asked >= 1

        moved = await call_ok(client, "move_memories", {"ids": [blue["id"]], "project_hint": "warehouse"})
        assert moved["moved"] == [blue["id"]]
        scan = await call_ok(client, "scan_hygiene", {"wait": True, "rejudge": True})
        assert scan["status"] == "completed" and scan["dismissed_stale"] >= 1

        dismissed = await call_ok(client, "get_conflict", {"id": row["id"]})
        assert dismissed["status"] == "dismissed"
        trail = (await call_ok(client, "get_memory", {"id": green["id"]}))["audit"]
        (entry,) = [a for a in trail if a["action"] == "queue.dismiss"]
        assert entry["payload"]["reason"] == "cross_project" and entry["run_id"] == scan["run_id"]
        assert len(served.asked_about(tag)) == asked  # neither the sweep nor the re-judge pass asked again
        for memory in (green, blue):
            assert (await call_ok(client, "get_memory", {"id": memory["id"]}))["memory"]["status"] == "live"


def add_trail(served: Served, memory_id: str, rows: int) -> None:
    """Many audit rows for one memory, as years of use would leave (written straight to the server's store)."""
    store = open_store(served.database_url)
    try:
        with system_tx(store, "test", write=True) as tx:
            start = tx.audit_for_memory(memory_id, limit=1)[0].at
            for n in range(rows):
                tx.add_audit(
                    actor="alice",
                    action="pin" if n % 2 == 0 else "unpin",
                    owner="alice",
                    memory_ids=[memory_id],
                    payload={"n": n},
                    run_id=None,
                    at=start + timedelta(minutes=n + 1),
                )
    finally:
        store.close()


async def test_a_long_audit_trail_reads_newest_first_and_pages_to_the_oldest(served: Served) -> None:
    async with connect(served.deployment, "http", "auto") as client:
        written = {"content": unique("The release train leaves on Tuesdays"), "kind": "fact", "scope": "personal"}
        fact = await call_ok(client, "remember", written)
        add_trail(served, fact["id"], 240)

        first = await call_ok(client, "get_memory", {"id": fact["id"]})
        assert [a["payload"]["n"] for a in first["audit"]] == list(range(239, 189, -1))  # 50 rows, the newest
        assert first["next_cursor"]

        trail, cursor = list(first["audit"]), first["next_cursor"]
        while cursor:
            page = await call_ok(client, "get_memory", {"id": fact["id"], "limit": 200, "cursor": cursor})
            trail += page["audit"]
            cursor = page["next_cursor"]
        assert len(trail) == 241 and trail[-1]["action"] == "remember"  # the oldest row: the write itself
        assert [a["payload"]["n"] for a in trail[:-1]] == list(range(239, -1, -1))

    shown = zm({**served.deployment.env, "ZM_USER": "alice"}, "get", fact["id"], "--limit", "3").stdout
    assert [line.split()[-1] for line in shown.splitlines() if line.startswith("  20")] == ["unpin", "pin", "unpin"]
    assert f"zm get {fact['id']} --cursor" in shown
