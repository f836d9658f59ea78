"""build_context through the official MCP client, over stdio and HTTP; the instructions a client receives."""

from __future__ import annotations

import pytest
from mcp.client.client import Client

from tests.mcp.helpers import call_error, call_ok, text_of, unique
from zero_memory.mcp.server import INSTRUCTIONS_BUDGET_BYTES

pytestmark = pytest.mark.anyio

SECTIONS = ("rules", "open_loops", "memories", "pending_reviews", "project", "session")


def item_ids(briefing: dict[str, object]) -> list[str]:
    return [
        item["id"]  # type: ignore[index]
        for name in ("rules", "open_loops", "memories")
        for item in briefing[name]["items"]  # type: ignore[index]
    ]


async def test_build_context_briefs_a_session_from_visible_scopes_only(client: Client, bob: Client) -> None:
    repo = f"/work/repos/{unique('ctx').split('[')[1].strip(']')}"
    # Sessions of their own: the shared connection's transport session must never be attached to a project.
    session = unique("session")
    remember = {"project_hint": repo, "session_id": session}
    rule = await call_ok(
        client, "remember", {**remember, "content": unique("Run make lint before pushing"), "kind": "convention"}
    )
    task = await call_ok(
        client, "remember", {**remember, "content": unique("Move CI to the new runners"), "kind": "task"}
    )
    gotcha = await call_ok(
        client,
        "remember",
        {**remember, "content": unique("The runners have no IPv6 route to the registry"), "kind": "gotcha"},
    )
    mine = await call_ok(
        client,
        "remember",
        {"scope": "personal", "content": unique("Prefer short PRs"), "kind": "preference", "session_id": unique("s")},
    )
    theirs = await call_ok(bob, "remember", {**remember, "content": unique("Bob's own CI task"), "kind": "task"})
    bobs = await call_ok(
        bob,
        "remember",
        {"scope": "personal", "content": unique("Bob likes tabs"), "kind": "preference", "session_id": unique("s")},
    )

    arguments = {"project_hint": repo, "topic": "CI runners and the registry", "session_id": session}
    result = await client.call_tool("build_context", arguments)
    assert not result.is_error, text_of(result)
    briefing = result.structured_content
    assert briefing is not None
    assert set(SECTIONS) <= set(briefing)
    assert briefing["project"] == rule["scope"] == briefing["session"]["attached_project"]
    ids = item_ids(briefing)
    assert {rule["id"], task["id"], gotcha["id"], mine["id"]} <= set(ids)
    assert theirs["id"] not in ids and bobs["id"] not in ids
    scopes = {item["scope"] for name in ("rules", "open_loops", "memories") for item in briefing[name]["items"]}
    assert all(s == "user.alice" or s.startswith(("user.alice.", "proj.alice.")) for s in scopes)
    for name in ("rules", "open_loops", "memories"):
        for item in briefing[name]["items"]:
            assert {"id", "kind", "scope", "age_days"} <= set(item)
    assert [i["open_days"] is not None for i in briefing["open_loops"]["items"]] == [True] * len(
        briefing["open_loops"]["items"]
    )
    text = text_of(result)
    assert len(text) <= briefing["budget_chars"] == 8000
    assert "## Rules" in text and "## Open loops" in text and "## Memories" in text and "## Pending reviews" in text
    # No resource links: a client hands the model a block per link beside the JSON, past the budget.
    assert [block.type for block in result.content] == ["text"]

    # The session is attached: a write with no target lands in the briefed project.
    later = await call_ok(
        client, "remember", {"content": unique("Runners are tagged ci-v2"), "kind": "fact", "session_id": session}
    )
    assert later["scope"] == rule["scope"]


async def test_build_context_refuses_bad_arguments(client: Client) -> None:
    assert (await call_error(client, "build_context", {"limit": 0})).startswith("validation_failed: limit")
    assert (await call_error(client, "build_context", {"bogus": 1})) == "validation_failed: bogus: unknown argument"


async def test_the_instructions_route_the_agent_within_the_client_budget(client: Client) -> None:
    instructions = client.instructions
    assert instructions is not None
    assert len(instructions.encode("utf-8")) <= INSTRUCTIONS_BUDGET_BYTES
    for must in ("`build_context`", "repository root", "`recall`", "`remember`", "`supersedes`", "`challenge`"):
        assert must in instructions
    assert instructions.index("`build_context`") < instructions.index("`recall`")
