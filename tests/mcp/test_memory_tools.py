"""Every memory tool's happy path, over stdio and HTTP, with the auto (2026) and legacy handshakes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp.client.client import Client
from mcp.types import ResourceLink

from tests.mcp.helpers import call_error, call_ok, text_of, unique

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

MEMORY_TOOLS = {"remember", "recall", "get_memory", "forget", "restore_memory", "close_loop", "move_memories", "link"}


async def remember(client: Client, content: str, kind: str = "fact", **fields: object) -> dict[str, Any]:
    """A write in a session of its own: the shared connection's transport session never gets attached
    to a project (which would route later core and personal writes there)."""
    fields.setdefault("scope", None if "project_hint" in fields else "personal")
    fields.setdefault("session_id", unique("session"))
    arguments = {"content": content, "kind": kind, **{k: v for k, v in fields.items() if v is not None}}
    return await call_ok(client, "remember", arguments)


async def test_the_memory_tools_are_listed_with_schemas_and_hints(client: Client) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) >= MEMORY_TOOLS
    for name in MEMORY_TOOLS:
        tool = tools[name]
        assert tool.description and tool.title
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        assert tool.input_schema["additionalProperties"] is False
        assert tool.annotations is not None and tool.annotations.open_world_hint is False
    hints = {
        name: (
            tools[name].annotations.read_only_hint,
            tools[name].annotations.destructive_hint,  # type: ignore[union-attr]
            tools[name].annotations.idempotent_hint,
        )
        for name in MEMORY_TOOLS
    }  # type: ignore[union-attr]
    assert hints == {
        "remember": (False, False, True),
        "recall": (False, False, False),
        "get_memory": (True, False, True),
        "forget": (False, True, True),
        "restore_memory": (False, False, True),
        "close_loop": (False, False, True),
        "move_memories": (False, False, True),
        "link": (False, False, True),
    }


async def test_remember_creates_a_memory_in_the_hinted_project(client: Client) -> None:
    content = unique("The API gateway terminates TLS; services behind it speak plain HTTP")
    result = await client.call_tool(
        "remember", {"content": content, "kind": "fact", "project_hint": "/work/src/gateway", "session_id": unique("s")}
    )
    assert not result.is_error
    out = result.structured_content
    assert out is not None
    assert out["status"] == "created" and out["id"].startswith("mem_")
    assert out["scope"] == "proj.alice.gateway" and out["rank"] == 1
    assert out["session"]["attached_project"] == "proj.alice.gateway"
    assert text_of(result).startswith(f"created {out['id']} in proj.alice.gateway")


async def test_remembering_the_same_text_again_is_absorbed(client: Client) -> None:
    content = unique("Prefer tabs for Makefiles, they are required")
    first = await remember(client, content, "convention")
    again = await client.call_tool("remember", {"content": content, "kind": "convention", "scope": "personal"})
    assert again.structured_content is not None
    assert again.structured_content["status"] == "absorbed" and again.structured_content["id"] == first["id"]
    assert text_of(again).startswith("absorbed:")


async def test_a_declared_supersede_retires_the_old_memory(client: Client) -> None:
    old = await remember(client, unique("The CI runs on Node 18"))
    new = await remember(
        client, unique("The CI runs on Node 20 since the upgrade"), links=[{"type": "supersedes", "dst": old["id"]}]
    )
    assert new["superseded"] == [old["id"]] and new["similar_existing"] == []
    retired = await call_ok(client, "get_memory", {"id": old["id"]})
    assert retired["memory"]["status"] == "invalidated"
    assert retired["memory"]["invalidated_reason"] == "superseded"
    assert retired["memory"]["superseded_by"] == new["id"]
    current = await call_ok(client, "get_memory", {"id": new["id"]})
    assert [entry["id"] for entry in current["history"]] == [old["id"]]
    assert {"type": "supersedes", "src": new["id"], "dst": old["id"]}.items() <= current["links"][0].items()


async def test_a_missing_supersede_target_is_skipped_and_reported(client: Client) -> None:
    out = await remember(
        client,
        unique("Feature flags live in flags.yaml"),
        links=[{"type": "supersedes", "dst": "mem_00000000000000000000000000"}],
    )
    assert out["status"] == "created"
    assert out["skipped_links"] == [
        {"dst": "mem_00000000000000000000000000", "type": "supersedes", "reason": "missing"}
    ]


async def test_a_close_memory_comes_back_as_similar_existing_with_a_hint(client: Client) -> None:
    tag = unique()
    first = await remember(
        client, f"The staging database runs PostgreSQL 15 on port 5433 {tag}", session_id=unique("s")
    )
    result = await client.call_tool(
        "remember",
        {
            "content": f"Staging uses PostgreSQL 15, listening on port 5433 {tag}",
            "kind": "fact",
            "scope": "personal",
            "session_id": unique("s"),
        },
    )
    out = result.structured_content
    assert out is not None and out["status"] == "created"
    assert first["id"] in [m["id"] for m in out["similar_existing"]]
    assert out["hint"] and "supersedes" in out["hint"]
    assert first["id"] in text_of(result) and "hint:" in text_of(result)


async def test_a_core_write_from_a_project_is_routed_to_the_project(client: Client) -> None:
    out = await remember(
        client, unique("Our deploy script lives in ops/deploy.sh"), scope="core", project_hint="/work/src/shop"
    )
    assert out["scope"] == "proj.alice.shop"
    assert out["routed_to_project"]["project"] == "proj.alice.shop"
    assert out["routed_to_project"]["reason"]


async def test_recall_finds_memories_and_links_each_hit_to_its_resource(client: Client) -> None:
    tag = unique()
    written = await remember(
        client, f"Use ruff for linting and formatting Python code {tag}", "convention", project_hint="/work/src/toolbox"
    )
    result = await client.call_tool(
        "recall",
        {
            "query": f"python linting {tag}",
            "project_hint": "/work/src/toolbox",
            "scopes": ["*"],
            "limit": 5,
            "session_id": unique("s"),
        },
    )
    assert not result.is_error
    hits = result.structured_content["hits"]  # type: ignore[index]
    hit = next(hit for hit in hits if hit["id"] == written["id"])
    assert hit["scope"] == "proj.alice.toolbox" and hit["kind"] == "convention" and hit["rank"] == 1
    assert hit["author_kind"] == "agent" and hit["disputed"] is False and hit["score"] > 0
    links = [block for block in result.content if isinstance(block, ResourceLink)]
    assert [str(link.uri) for link in links] == [f"zm://memory/{h['id']}" for h in hits]
    assert written["id"] in text_of(result) and tag in text_of(result)


async def test_recall_filters_by_kind(client: Client) -> None:
    tag = unique()
    await remember(client, f"Deploys happen on Tuesdays {tag}", "fact")
    await remember(client, f"Deploy on Tuesdays, never Fridays {tag}", "decision")
    out = await call_ok(client, "recall", {"query": f"deploys {tag}", "kinds": ["decision"], "scopes": ["personal"]})
    assert out["hits"] and {hit["kind"] for hit in out["hits"]} == {"decision"}


async def test_get_memory_and_the_resource_return_the_same_row(client: Client) -> None:
    written = await remember(client, unique("Log lines are JSON, one object per line"), "convention")
    row = await call_ok(client, "get_memory", {"id": written["id"]})
    assert row["memory"]["content"].startswith("Log lines are JSON")
    assert row["memory"]["agent_name"].startswith("pytest-")
    assert [entry["action"] for entry in row["audit"]] == ["remember"]
    resource = await client.read_resource(f"zm://memory/{written['id']}")
    assert resource.contents[0].mime_type == "application/json"
    read = json.loads(resource.contents[0].text)  # type: ignore[union-attr]
    assert read["memory"] | {"age_days": 0} == row["memory"] | {"age_days": 0}
    assert read["audit"] == row["audit"]


async def test_forget_and_restore_are_reversible_and_idempotent(client: Client) -> None:
    tag = unique()
    written = await remember(client, f"The cache TTL is five minutes {tag}")
    forgotten = await call_ok(client, "forget", {"id": written["id"], "reason": "wrong"})
    assert forgotten == {
        "id": written["id"],
        "status": "invalidated",
        "changed": True,
        "invalidated_reason": "forgotten",
        "removed_links": [],
    }
    assert (await call_ok(client, "forget", {"id": written["id"]}))["changed"] is False
    recalled = await call_ok(client, "recall", {"query": f"cache TTL {tag}", "scopes": ["personal"]})
    assert written["id"] not in [hit["id"] for hit in recalled["hits"]]
    restored = await call_ok(client, "restore_memory", {"id": written["id"]})
    assert restored["status"] == "live" and restored["changed"] is True
    assert (await call_ok(client, "restore_memory", {"id": written["id"]}))["changed"] is False
    recalled = await call_ok(client, "recall", {"query": f"cache TTL {tag}", "scopes": ["personal"]})
    assert written["id"] in [hit["id"] for hit in recalled["hits"]]


async def test_close_loop_closes_a_task_only(client: Client) -> None:
    task = await remember(client, unique("Migrate the cron jobs to the scheduler"), "task")
    closed = await call_ok(client, "close_loop", {"id": task["id"], "note": "done in the last release"})
    assert closed["changed"] is True and closed["invalidated_reason"] == "closed"
    fact = await remember(client, unique("The scheduler runs in UTC"))
    text = await call_error(client, "close_loop", {"id": fact["id"]})
    assert text.startswith("validation_failed: id:")


async def test_move_memories_moves_reports_unchanged_and_continues_past_failures(client: Client) -> None:
    first = await remember(client, unique("Graphs are drawn with matplotlib"))
    second = await remember(client, unique("Plots use the viridis colormap"))
    missing = "mem_00000000000000000000000001"
    out = await call_ok(
        client, "move_memories", {"ids": [first["id"], missing, second["id"]], "project_hint": "/work/src/plots"}
    )
    assert out["scope"] == "proj.alice.plots"
    assert out["moved"] == [first["id"], second["id"]]
    assert [f["id"] for f in out["failed"]] == [missing] and out["failed"][0]["error"].startswith("not_found:")
    again = await call_ok(client, "move_memories", {"ids": [first["id"]], "scope": "plots"})
    assert again["unchanged"] == [first["id"]] and again["moved"] == []
    assert (await call_ok(client, "get_memory", {"id": first["id"]}))["memory"]["scope"] == "proj.alice.plots"


async def test_link_relates_two_memories_once(client: Client) -> None:
    a = await remember(client, unique("Retries use exponential backoff"))
    b = await remember(client, unique("The HTTP client times out after 10 seconds"))
    assert await call_ok(client, "link", {"src": a["id"], "dst": b["id"], "type": "relates_to"}) == {
        "src": a["id"],
        "dst": b["id"],
        "type": "relates_to",
        "created": True,
    }
    assert (await call_ok(client, "link", {"src": a["id"], "dst": b["id"], "type": "relates_to"}))["created"] is False
    row = await call_ok(client, "get_memory", {"id": a["id"]})
    assert [(lk["type"], lk["dst"]) for lk in row["links"]] == [("relates_to", b["id"])]


async def test_an_explicit_session_id_attaches_on_the_first_hint(client: Client) -> None:
    session = unique("conversation")
    await call_ok(client, "recall", {"query": "anything", "project_hint": "/work/src/billing", "session_id": session})
    out = await call_ok(
        client, "remember", {"content": unique("Invoices are numbered per year"), "kind": "fact", "session_id": session}
    )
    assert out["scope"] == "proj.alice.billing"
    assert out["session"] == {"attached_project": "proj.alice.billing", "session_id": session}
