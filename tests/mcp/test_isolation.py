"""Two users on one server: neither can read, change, supersede, link or move the other's memories.

Every attempt answers exactly as a missing id does (the id differs, so texts
are compared with each id replaced by ``<id>``), and alice's memory is
untouched afterwards; a link bob declares to her memory in ``remember`` is
skipped and reported ``missing``, as a link to an id that exists nowhere is.
Each test runs over stdio, HTTP with bearer tokens, and HTTP with access
tokens both users got through the OAuth flow.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from mcp.client.client import Client
from mcp.shared.exceptions import MCPError

from tests.mcp.helpers import ALL_CONNECTIONS, call_error, call_ok, unique

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

MISSING_ID = "mem_01zzzzzzzzzzzzzzzzzzzzzzzy"


@pytest.fixture(params=[*ALL_CONNECTIONS, pytest.param(("oauth", "auto"), id="oauth-auto")])
def via(request: pytest.FixtureRequest) -> tuple[str, str]:
    """Every connection of conftest's ``via``, and HTTP with OAuth-issued access tokens."""
    return request.param  # type: ignore[no-any-return]


def same_answer(text: str, memory_id: str) -> str:
    return text.replace(memory_id, "<id>")


async def alices(client: Client, kind: str = "fact") -> dict[str, Any]:
    return await call_ok(
        client,
        "remember",
        {"content": unique("alice's private note"), "kind": kind, "scope": "personal", "session_id": unique("s")},
    )


async def answers_as_missing(bob: Client, tool: str, arguments: dict[str, Any], alice_id: str) -> None:
    """``arguments`` name alice's id; the same call with a missing id must read the same."""
    theirs = await call_error(bob, tool, arguments)
    missing = await call_error(bob, tool, {k: (MISSING_ID if v == alice_id else v) for k, v in arguments.items()})
    assert same_answer(theirs, alice_id) == same_answer(missing, MISSING_ID)
    assert theirs.startswith("not_found:")


async def test_bob_cannot_read_alices_memory(client: Client, bob: Client) -> None:
    memory = await alices(client)
    await answers_as_missing(bob, "get_memory", {"id": memory["id"]}, memory["id"])
    recalled = await call_ok(bob, "recall", {"query": "alice's private note", "scopes": ["*"], "limit": 50})
    assert memory["id"] not in [hit["id"] for hit in recalled["hits"]]


async def test_bob_cannot_read_alices_memory_as_a_resource(client: Client, bob: Client) -> None:
    memory = await alices(client)
    with pytest.raises(MCPError) as theirs:
        await bob.read_resource(f"zm://memory/{memory['id']}")
    with pytest.raises(MCPError) as missing:
        await bob.read_resource(f"zm://memory/{MISSING_ID}")
    assert (theirs.value.error.code, theirs.value.error.message) == (
        missing.value.error.code,
        missing.value.error.message,
    )
    assert theirs.value.error.message.startswith("not_found:")


async def test_bob_cannot_forget_restore_or_close_alices_memories(client: Client, bob: Client) -> None:
    memory = await alices(client)
    task = await alices(client, "task")
    await answers_as_missing(bob, "forget", {"id": memory["id"]}, memory["id"])
    await answers_as_missing(bob, "close_loop", {"id": task["id"]}, task["id"])
    await call_ok(client, "forget", {"id": memory["id"]})
    await answers_as_missing(bob, "restore_memory", {"id": memory["id"]}, memory["id"])
    assert (await call_ok(client, "get_memory", {"id": memory["id"]}))["memory"]["status"] == "invalidated"
    assert (await call_ok(client, "get_memory", {"id": task["id"]}))["memory"]["status"] == "live"


async def test_bob_cannot_link_to_or_from_alices_memories(client: Client, bob: Client) -> None:
    memory = await alices(client)
    own = await call_ok(
        bob,
        "remember",
        {"content": unique("bob's note"), "kind": "fact", "scope": "personal", "session_id": unique("s")},
    )
    await answers_as_missing(bob, "link", {"src": own["id"], "dst": memory["id"], "type": "relates_to"}, memory["id"])
    await answers_as_missing(bob, "link", {"src": memory["id"], "dst": own["id"], "type": "relates_to"}, memory["id"])
    assert (await call_ok(client, "get_memory", {"id": memory["id"]}))["links"] == []


async def test_bob_cannot_move_alices_memory(client: Client, bob: Client) -> None:
    memory = await alices(client)
    theirs = await call_ok(bob, "move_memories", {"ids": [memory["id"]], "scope": "personal"})
    missing = await call_ok(bob, "move_memories", {"ids": [MISSING_ID], "scope": "personal"})
    assert theirs["moved"] == [] and [f["id"] for f in theirs["failed"]] == [memory["id"]]
    assert same_answer(theirs["failed"][0]["error"], memory["id"]) == same_answer(
        missing["failed"][0]["error"], MISSING_ID
    )
    assert (await call_ok(client, "get_memory", {"id": memory["id"]}))["memory"]["scope"] == "user.alice"


async def test_bob_cannot_write_into_or_read_alices_scopes(client: Client, bob: Client) -> None:
    theirs = await call_error(
        bob, "remember", {"content": unique("sneaky"), "kind": "fact", "scope": "user.alice.core"}
    )
    missing = await call_error(
        bob, "remember", {"content": unique("sneaky"), "kind": "fact", "scope": "user.nobody.core"}
    )
    assert theirs.replace("alice", "<u>") == missing.replace("nobody", "<u>")
    assert theirs.startswith("validation_failed: scope:")
    text = await call_error(bob, "recall", {"query": "anything", "scopes": ["user.alice"]})
    assert text.startswith("validation_failed: scope:")


# A neighbour's similarity may move in its last digit between two writes of the same text (the embedder runs
# the texts of calls that arrive together in one pass): compared within a tolerance, the rest exactly.
SIMILARITY = re.compile(r"similarity \d+\.\d+")


def similarities(answer: dict[str, Any]) -> list[float]:
    """The answer's neighbour similarities, taken out of it."""
    return [neighbour.pop("similarity") for neighbour in answer.get("similar_existing", [])]


async def declare(bob: Client, link_type: str, target: str, note: str) -> tuple[dict[str, Any], str]:
    """bob writes ``note`` declaring ``link_type`` to ``target``: its structured answer and text mirror."""
    result = await bob.call_tool(
        "remember",
        {
            "content": note,
            "kind": "fact",
            "scope": "personal",
            "session_id": note,
            "links": [{"type": link_type, "dst": target}],
        },
    )
    assert not result.is_error, result
    answer = result.structured_content or {}
    # The same note is written again: out of the way, so both writes meet the same neighbours.
    await call_ok(bob, "forget", {"id": answer["id"]})
    text = "".join(getattr(block, "text", "") for block in result.content)
    return json.loads(json.dumps(answer).replace(answer["id"], "<new>")), text.replace(answer["id"], "<new>")


@pytest.mark.parametrize("link_type", ["supersedes", "relates_to", "derived_from"])
async def test_a_link_to_alices_memory_is_skipped_exactly_as_a_missing_one(
    client: Client, bob: Client, link_type: str
) -> None:
    """spec tools.md, ``remember`` links: a target the caller cannot see is exactly a missing one."""
    memory = await alices(client)
    before = await call_ok(client, "get_memory", {"id": memory["id"]})
    note = unique("bob's replacement")
    theirs, theirs_text = await declare(bob, link_type, memory["id"], note)
    missing, missing_text = await declare(bob, link_type, MISSING_ID, note)
    theirs_answer = json.loads(same_answer(json.dumps(theirs), memory["id"]))
    missing_answer = json.loads(same_answer(json.dumps(missing), MISSING_ID))
    assert similarities(theirs_answer) == pytest.approx(similarities(missing_answer), abs=1e-3)
    assert theirs_answer == missing_answer
    assert SIMILARITY.sub("", same_answer(theirs_text, memory["id"])) == SIMILARITY.sub(
        "", same_answer(missing_text, MISSING_ID)
    )
    assert theirs["status"] == "created" and theirs["superseded"] == []
    assert theirs["skipped_links"] == [{"dst": memory["id"], "type": link_type, "reason": "missing"}]
    assert "alice's private note" not in json.dumps(theirs) + theirs_text
    assert await call_ok(client, "get_memory", {"id": memory["id"]}) == before


async def test_a_session_id_is_per_user(client: Client, bob: Client) -> None:
    """Passing alice's session id does not make bob write into alice's project."""
    session = unique("shared-looking-session")
    await call_ok(client, "recall", {"query": "x", "project_hint": "/work/src/secret-plans", "session_id": session})
    text = await call_error(bob, "remember", {"content": unique("bob's note"), "kind": "fact", "session_id": session})
    assert text.startswith("validation_failed: scope_target_required:")
