"""What the hygiene and conflict tools say about themselves, read through the official MCP client.

Their annotations are true (a tool that writes is not read-only), every answer
carries the session as remember's and recall's do, and a team scope's memory
is never proposed for anyone's core: approving would take it from teammates.
The judge is a fake OpenAI-compatible server that finds every fact portable.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

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
    unique,
    zm,
)
from zero_memory.domain.records import PortabilityCandidate
from zero_memory.store import open_store, system_tx

pytestmark = pytest.mark.anyio


def judge_answer(request: RecordedRequest) -> Reply:
    if FakeOpenAIServer.schema_name(request) == "portability_verdict":
        return FakeOpenAIServer.portability(True, 0.95, "True of the tool, not of one project.")
    if "build cache" in FakeOpenAIServer.user_message(request):
        return FakeOpenAIServer.verdict("duplicate", 0.97, "The same location, stated twice.")
    return FakeOpenAIServer.verdict("unrelated", 0.9, "Different subjects.")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    home = tmp_path_factory.mktemp("zm-conflict-tools")
    with FakeOpenAIServer() as fake:
        fake.respond_with(judge_answer)
        env = {**base_env(home), **judge_env(fake.base_url)}
        with serving(home, env) as deployment:
            yield deployment


HINTS = {
    # (readOnlyHint, destructiveHint, idempotentHint)
    "recall": (False, False, False),  # records every hit as a surfacing; a project_hint attaches the session
    "challenge": (False, False, True),  # a repeat while its row is open returns that row and writes nothing
    "build_context": (False, False, False),  # records what it serves as surfacings
    "scan_hygiene": (False, True, False),  # may invalidate memories (reversibly, by undoing its run)
    "list_conflicts": (True, False, True),
    "get_conflict": (True, False, True),
    "list_portability": (True, False, True),
}


async def test_the_tools_that_write_are_not_annotated_read_only(served: Deployment) -> None:
    async with connect(served, "http", "auto") as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    hints = {
        name: (
            tools[name].annotations.read_only_hint,  # type: ignore[union-attr]
            tools[name].annotations.destructive_hint,  # type: ignore[union-attr]
            tools[name].annotations.idempotent_hint,  # type: ignore[union-attr]
        )
        for name in HINTS
    }
    assert hints == HINTS


@pytest.mark.parametrize(("transport", "mode"), [("http", "auto"), ("stdio", "legacy")])
async def test_every_conflict_tool_answers_with_the_session(served: Deployment, transport: str, mode: str) -> None:
    async with connect(served, transport, mode) as client:
        session = unique("conversation")
        await call_ok(client, "recall", {"query": "x", "project_hint": "/work/src/shop", "session_id": session})
        expected = {"attached_project": "proj.alice.shop", "session_id": session}
        fact = await call_ok(
            client, "remember", {"content": unique("The shop's CDN is Fastly"), "kind": "fact", "session_id": session}
        )
        dispute = (await call_ok(client, "challenge", {"memory_id": fact["id"], "reason": "It moved"}))["dispute_id"]
        other = await call_ok(
            client, "remember", {"content": unique("The shop's queue is SQS"), "kind": "fact", "session_id": session}
        )
        other_dispute = (await call_ok(client, "challenge", {"memory_id": other["id"], "reason": "Now Kafka"}))[
            "dispute_id"
        ]
        answers = {
            "list_conflicts": await call_ok(client, "list_conflicts", {"session_id": session}),
            "get_conflict": await call_ok(client, "get_conflict", {"id": dispute, "session_id": session}),
            "resolve_conflict": await call_ok(
                client, "resolve_conflict", {"dispute_id": dispute, "keep_both": True, "session_id": session}
            ),
            "resolve_conflicts": await call_ok(
                client, "resolve_conflicts", {"resolutions": [{"dispute_id": other_dispute}], "session_id": session}
            ),
            "list_portability": await call_ok(client, "list_portability", {"session_id": session}),
            "scan_hygiene": await call_ok(client, "scan_hygiene", {"dry_run": True, "session_id": session}),
        }
        for tool, answer in answers.items():
            assert answer["session"] == expected, tool
        listed = await call_ok(client, "list_conflicts", {})
        assert set(listed["session"]) == {"attached_project", "session_id"}


async def test_a_team_scope_memory_is_never_proposed_for_core(served: Deployment) -> None:
    env = {**served.env, "ZM_USER": "alice"}
    zm(env, "project", "create", "crew", "--team")
    zm(env, "project", "create", "tools")
    async with connect(served, "http", "auto") as client:
        shared = await call_ok(
            client,
            "remember",
            {
                "content": unique("ripgrep skips .gitignored files unless -u"),
                "kind": "gotcha",
                "scope": "team.alice.crew",
            },
        )
        own = await call_ok(
            client,
            "remember",
            {"content": unique("jq -r prints strings without quotes"), "kind": "gotcha", "scope": "proj.alice.tools"},
        )
        scan = await call_ok(client, "scan_hygiene", {"wait": True})
        assert scan["portability_proposed"] >= 1
        proposed = (await call_ok(client, "list_portability", {"status": None}))["proposals"]
        audited = {p["memory"]["id"] for p in proposed}
        assert own["id"] in audited and shared["id"] not in audited

        # A proposal filed before team scopes were left out of the audit is refused, and moves nothing.
        store = open_store(f"sqlite:///{served.database}")
        try:
            with system_tx(store, "test", write=True) as tx:
                tx.add_portability(
                    PortabilityCandidate(
                        id="prt_team_proposal_before_the_rule",
                        memory_id=shared["id"],
                        owner="alice",
                        status="pending",
                        original_scope="team.alice.crew",
                        created_at=datetime.now(UTC),
                        confidence=0.95,
                        rationale="True of the tool.",
                        model="judge-strong",
                    )
                )
        finally:
            store.close()
        text = await call_error(
            client, "resolve_portability", {"candidate_id": "prt_team_proposal_before_the_rule", "approve": True}
        )
        assert text.startswith("conflict: ") and "team.alice.crew" in text and "teammates" in text
        assert (await call_ok(client, "get_memory", {"id": shared["id"]}))["memory"]["scope"] == "team.alice.crew"
        dismissed = await call_ok(
            client, "resolve_portability", {"candidate_id": "prt_team_proposal_before_the_rule", "approve": False}
        )
        assert dismissed["status"] == "dismissed" and dismissed["scope"] == "team.alice.crew"


async def test_a_retro_row_shows_its_proposal_in_list_conflicts_and_accepting_it_carries_it_out(
    served: Deployment,
) -> None:
    async with connect(served, "http", "auto") as client:
        personal = {"kind": "fact", "scope": "personal"}
        old = await call_ok(
            client, "remember", {"content": unique("The build cache lives in /var/cache/b"), **personal}
        )
        new = await call_ok(
            client, "remember", {"content": unique("The build cache lives in /var/cache/b on runners"), **personal}
        )
        zm({**served.env, "ZM_USER": "alice"}, "hygiene", "retro", "--max", "10")
        rows = (await call_ok(client, "list_conflicts", {"verdict": "duplicate", "limit": 100}))["conflicts"]
        (row,) = [r for r in rows if {r["memory_a"]["id"], r["memory_b"]["id"]} == {old["id"], new["id"]}]
        assert row["origin"] == "retro"
        assert row["proposal"] == {
            "action": "invalidate",
            "winner": new["id"],
            "loser": old["id"],
            "reason": "duplicate",
        }
        settled = await call_ok(client, "resolve_conflict", {"dispute_id": row["id"], "accept": True})
        assert settled["resolution"] == {"winner": new["id"]} and settled["invalidated"] == [old["id"]]
        gone = (await call_ok(client, "get_memory", {"id": old["id"]}))["memory"]
        assert (gone["status"], gone["superseded_by"]) == ("invalidated", new["id"])
