"""Hygiene end to end: the official MCP client against ``zm serve``/``zm mcp``, the judge behind a fake
OpenAI-compatible server on 127.0.0.1. Write, scan with wait, read the queue, resolve, restore."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.server import RecordedRequest, Reply
from tests.mcp.helpers import (
    Deployment,
    base_env,
    call_error,
    call_ok,
    connect,
    judge_env,
    serving,
)
from zero_memory.store import open_store, system_tx

pytestmark = pytest.mark.anyio


def judge_answer(request: RecordedRequest) -> Reply:
    """Verdicts by topic, as a real judge would give them for these texts.

    Memories of two runs of the scenario (their tags differ) are unrelated: each run restores what it
    lost, and a restored memory is never retired automatically again, so one run's restored memories
    would otherwise turn the next run's resolutions into queue rows.
    """
    if request.body["response_format"]["json_schema"]["name"] == "portability_verdict":
        return FakeOpenAIServer.portability(False, 0.9, "Project-specific.")
    text = FakeOpenAIServer.user_message(request)
    if len(set(re.findall(r"\((\w+ \w+)\)", text))) > 1:
        return FakeOpenAIServer.verdict("unrelated", 0.9, "Different runs of the scenario.")
    if "staging database" in text:
        return FakeOpenAIServer.verdict("contradiction", 0.92, "Both cannot be the staging colour.")
    if "build cache" in text:
        return FakeOpenAIServer.verdict("duplicate", 0.97, "The same location, stated twice.")
    return FakeOpenAIServer.verdict("unrelated", 0.9, "Different subjects.")


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    """A deployment whose judge is a fake OpenAI-compatible server, with ``zm serve`` running."""
    home = tmp_path_factory.mktemp("zm-hygiene")
    with FakeOpenAIServer() as fake:
        fake.respond_with(judge_answer)
        env = {**base_env(home), **judge_env(fake.base_url)}
        with serving(home, env) as deployment:
            yield deployment


@pytest.mark.parametrize(("transport", "mode"), [("http", "auto"), ("http", "legacy"), ("stdio", "legacy")])
async def test_write_scan_review_resolve_restore(judged: Deployment, transport: str, mode: str) -> None:
    async with connect(judged, transport, mode) as client:
        tag = f"{transport} {mode}"
        session = f"e2e-{transport}-{mode}"
        remember = {"kind": "fact", "scope": "personal", "session_id": session}
        green = await call_ok(client, "remember", {**remember, "content": f"The staging database is green ({tag})"})
        blue = await call_ok(
            client,
            "remember",
            {**remember, "content": f"The staging database is blue ({tag})", "session_id": f"{session}-2"},
        )
        cache = await call_ok(client, "remember", {**remember, "content": f"The build cache lives in .cache ({tag})"})
        again = await call_ok(
            client,
            "remember",
            {**remember, "content": f"Our build cache lives in .cache ({tag})", "session_id": f"{session}-3"},
        )
        assert blue["status"] == again["status"] == "created"

        scan = await call_ok(client, "scan_hygiene", {"wait": True})
        assert scan["status"] == "completed"
        assert scan["queued"] >= 1 and scan["auto_resolved"] >= 1 and scan["failed_judgements"] == 0

        queue = await call_ok(client, "list_conflicts", {"verdict": "contradiction"})
        row = next(
            r for r in queue["conflicts"] if {r["memory_a"]["id"], r["memory_b"]["id"]} == {green["id"], blue["id"]}
        )
        assert row["confidence"] == 0.92 and row["model"] == "judge-strong"
        assert row["rationale"] == "Both cannot be the staging colour."
        assert queue["pending_count"] >= 1
        assert (await call_ok(client, "get_conflict", {"id": row["id"]}))["verdict"] == "contradiction"

        # The duplicate was resolved automatically: the older copy is invalidated, reversibly, with its evidence.
        older = await call_ok(client, "get_memory", {"id": cache["id"]})
        assert older["memory"]["status"] == "invalidated"
        assert older["memory"]["invalidated_reason"] == "duplicate"
        assert older["memory"]["superseded_by"] == again["id"]
        evidence = next(a for a in older["audit"] if a["action"] == "hygiene.auto_resolve")
        assert evidence["payload"]["verdict"] == "duplicate" and evidence["payload"]["confidence"] == 0.97
        assert evidence["payload"]["model"] == "judge-strong" and evidence["run_id"] == scan["run_id"]

        flagged = await call_ok(
            client, "recall", {"query": f"staging database ({tag})", "scopes": ["personal"], "session_id": session}
        )
        assert any(h["disputed"] for h in flagged["hits"] if h["id"] in (green["id"], blue["id"]))

        settled = await call_ok(client, "resolve_conflict", {"dispute_id": row["id"], "winner": blue["id"]})
        assert settled["invalidated"] == [green["id"]]
        refused = await call_error(client, "resolve_conflict", {"dispute_id": row["id"], "keep_both": True})
        assert refused.startswith("conflict: already_resolved:")
        assert (await call_ok(client, "get_memory", {"id": green["id"]}))["memory"]["superseded_by"] == blue["id"]

        for loser in (green["id"], cache["id"]):
            assert (await call_ok(client, "restore_memory", {"id": loser}))["status"] == "live"

        # A second scan spends nothing on pairs already judged or settled.
        second = await call_ok(client, "scan_hygiene", {"wait": True})
        assert second["auto_resolved"] == 0 and second["queued"] == 0
        assert second["skipped_settled"] + second["skipped_cached"] >= 2


async def test_challenge_is_idempotent_and_policies_skip_single_rows(judged: Deployment) -> None:
    async with connect(judged, "http", "legacy") as client:
        fact = await call_ok(
            client,
            "remember",
            {"content": "The VPN gateway is vpn.example.internal", "kind": "fact", "scope": "personal"},
        )
        first = await call_ok(client, "challenge", {"memory_id": fact["id"], "reason": "It moved to vpn2 last week"})
        again = await call_ok(client, "challenge", {"memory_id": fact["id"], "reason": "Still wrong"})
        assert first["created"] and not again["created"] and again["dispute_id"] == first["dispute_id"]
        singles = await call_ok(client, "list_conflicts", {"shape": "single"})
        assert first["dispute_id"] in [r["id"] for r in singles["conflicts"]]
        bulk = await call_ok(client, "resolve_conflicts", {"policy": {"name": "keep_both"}})
        assert first["dispute_id"] in bulk["skipped"]
        retired = await call_ok(client, "resolve_conflict", {"dispute_id": first["dispute_id"], "retire": True})
        assert retired["invalidated"] == [fact["id"]]
        prompt = await client.get_prompt("triage", {})
        assert "resolve_conflicts" in prompt.messages[0].content.text  # type: ignore[union-attr]


def test_judge_calls_are_on_the_owners_ledger(judged: Deployment) -> None:
    store = open_store(f"sqlite:///{judged.database}")
    try:
        with system_tx(store, "test") as tx:
            rows = tx.ledger(owner="alice")
            assert rows and all(r["purpose"] in ("scan", "rescan", "portability") for r in rows)
            assert all(r["model"] == "judge-strong" for r in rows if r["purpose"] == "scan")
            assert tx.ledger(owner="bob") == []
    finally:
        store.close()
