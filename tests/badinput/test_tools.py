"""Every tool refuses bad input with its stable prefix and changes nothing (issue 9, "Bad input").

The table (``table.ROWS``) runs against one ``zm serve`` over HTTP; a sample of
it runs over stdio too. After each refusal the database is compared table by
table with its state before the call (``snapshot``): only the usage event of
the call itself may be new.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from mcp.client.client import Client

from tests.badinput.conftest import Seed
from tests.badinput.snapshot import changed, snapshot
from tests.badinput.table import (
    EMOJI,
    FOREIGN,
    FOREIGN_IN_A_BATCH,
    NUL,
    ROWS,
    RTL,
    has_surrogate,
    params,
    resolve,
    twin,
)
from tests.mcp.conftest import ClientPool
from tests.mcp.helpers import Deployment, call_error, call_ok, connect, text_of

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def test_the_table_covers_every_tool() -> None:
    from zero_memory.mcp.server import tool_modules

    tools = {spec.name for module in tool_modules() for spec in module.toolset.specs}
    assert {row.tool for row in ROWS.values()} == tools
    with_ids = {
        "get_memory",
        "forget",
        "restore_memory",
        "close_loop",
        "link",
        "challenge",
        "get_conflict",
        "resolve_conflict",
        "resolve_portability",
        "move_memories",
        "resolve_conflicts",
    }
    assert {tool for tool, *_ in [*FOREIGN.values(), *FOREIGN_IN_A_BATCH.values()]} == with_ids


PARSE_ERROR = -32700


async def raw_call(served: Deployment, user: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A tools/call written as JSON by hand (the SDK client cannot encode a lone surrogate; a JSON escape can).

    The JSON-RPC response: ``result`` for a tool answer, ``error`` for a protocol refusal.
    """
    headers = {
        "Authorization": f"Bearer {served.tokens[user]}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    async with httpx.AsyncClient(base_url=served.url, headers=headers, timeout=30) as http:
        init = await http.post(
            "/mcp",
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "raw-json", "version": "1"},
                },
            },
        )
        assert init.status_code == 200, init.text
        session = {"mcp-session-id": init.headers["mcp-session-id"]}
        await http.post("/mcp", headers=session, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        body = json.dumps(
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
        )  # ensure_ascii: \ud800 escapes
        answer = await http.post("/mcp", headers=session, content=body.encode("ascii"))
    if answer.headers["content-type"].startswith("text/event-stream"):
        payload: dict[str, Any] = next(
            json.loads(line[5:]) for line in answer.text.splitlines() if line.startswith("data:")
        )
        return payload
    json_payload: dict[str, Any] = answer.json()
    return json_payload


async def refused(client: Client, served: Deployment, tool: str, arguments: dict[str, Any]) -> str:
    """Call, expect a refusal, and check the database is as it was; the refusal's text."""
    before = snapshot(served.database)
    text = await call_error(client, tool, arguments)
    assert changed(before, snapshot(served.database)) == [], f"{tool} changed the database while refusing: {text}"
    return text


@pytest.mark.parametrize("key", params(ROWS))
async def test_bad_input_is_refused_with_its_prefix_and_changes_nothing(
    clients: ClientPool, served: Deployment, seed: Seed, key: str
) -> None:
    row = ROWS[key]
    arguments = resolve(row.arguments, seed)
    if has_surrogate(arguments):
        # The SDK's JSON parser refuses a lone surrogate escape before any tool sees it; in process the
        # tool layer refuses it with the row's prefix (test_in_process_the_tool_layer_names_the_field).
        before = snapshot(served.database)
        answer = await raw_call(served, "alice", row.tool, arguments)
        assert changed(before, snapshot(served.database)) == []
        assert answer["error"]["code"] == PARSE_ERROR, answer
        return
    client = await clients.get("alice", "http", "auto")
    text = await refused(client, served, row.tool, arguments)
    assert text.startswith(row.expected), text
    assert "\n" not in text and len(text) < 2_000, "an error is one bounded line"


def same(text: str, ids: dict[str, str]) -> str:
    for real, placeholder in ids.items():
        text = text.replace(real, placeholder)
    return text


# alice's bearer token, and an access token alice got through the OAuth flow: the same walls either way.
CREDENTIALS = ["http", "oauth"]


@pytest.mark.parametrize("credential", CREDENTIALS)
@pytest.mark.parametrize("key", params(FOREIGN))
async def test_another_users_id_answers_exactly_as_a_missing_one(
    clients: ClientPool, served: Deployment, seed: Seed, key: str, credential: str
) -> None:
    tool, arguments = FOREIGN[key]
    client = await clients.get("alice", credential, "auto")
    theirs = await refused(client, served, tool, resolve(arguments, seed))
    missing = await refused(client, served, tool, resolve(twin(arguments), seed))
    placeholders = {
        seed.bob_fact: "<id>",
        seed.missing_memory: "<id>",
        seed.bob_single: "<id>",
        seed.missing_dispute: "<id>",
        seed.bob_candidate: "<id>",
        seed.missing_candidate: "<id>",
    }
    assert same(theirs, placeholders) == same(missing, placeholders)
    assert theirs.startswith("not_found: ")


@pytest.mark.parametrize("credential", CREDENTIALS)
@pytest.mark.parametrize("key", params(FOREIGN_IN_A_BATCH))
async def test_another_users_id_in_a_batch_fails_as_a_missing_one(
    clients: ClientPool, served: Deployment, seed: Seed, key: str, credential: str
) -> None:
    tool, arguments, failures = FOREIGN_IN_A_BATCH[key]
    client = await clients.get("alice", credential, "auto")
    before = snapshot(served.database)
    theirs = await call_ok(client, tool, resolve(arguments, seed))
    missing = await call_ok(client, tool, resolve(twin(arguments), seed))
    assert changed(before, snapshot(served.database)) == []
    placeholders = {
        seed.bob_fact: "<id>",
        seed.missing_memory: "<id>",
        seed.bob_single: "<id>",
        seed.missing_dispute: "<id>",
    }
    assert json.loads(same(json.dumps(theirs), placeholders)) == json.loads(same(json.dumps(missing), placeholders))
    assert len(theirs[failures]) == 1 and theirs[failures][0]["error"].startswith("not_found: ")


STDIO_SAMPLE = [
    "remember/unknown-kind",
    "remember/oversized-content",
    "remember/secret-in-content",
    "remember/eleven-supersedes",
    "recall/nul-in-query",
    "get_memory/missing-id",
    "resolve_conflict/already-resolved",
    "resolve_conflicts/101-resolutions",
    "resolve_portability/already-dismissed",
    "challenge/secret-in-reason",
]


async def test_stdio_refuses_the_same_way(served: Deployment, clients: ClientPool, seed: Seed) -> None:
    """One ``zm mcp`` process, a row of each kind: the same text as over HTTP, and no change."""
    http = await clients.get("alice", "http", "auto")
    async with connect(served, "stdio", "auto", user="alice") as stdio:
        for key in STDIO_SAMPLE:
            row = ROWS[key]
            arguments = resolve(row.arguments, seed)
            over_stdio = await refused(stdio, served, row.tool, arguments)
            assert over_stdio.startswith(row.expected), (key, over_stdio)
            assert over_stdio == await call_error(http, row.tool, arguments), key


async def test_right_to_left_marks_and_four_byte_emoji_are_stored_verbatim(clients: ClientPool) -> None:
    """Valid Unicode is not bad input: it round-trips exactly, and recall finds it."""
    client = await clients.get("alice", "http", "auto")
    content = f"The {RTL}deploy bot{RTL} answers with {EMOJI} and \u05e9\u05dc\u05d5\u05dd \U0001f9ea on success"
    written = await call_ok(client, "remember", {"content": content, "kind": "fact", "scope": "personal"})
    read = await call_ok(client, "get_memory", {"id": written["id"]})
    assert read["memory"]["content"] == content
    hits = await call_ok(client, "recall", {"query": f"deploy bot answers {EMOJI}", "scopes": ["*"]})
    assert written["id"] in [hit["id"] for hit in hits["hits"]]


async def test_content_of_exactly_the_limit_is_accepted(clients: ClientPool) -> None:
    client = await clients.get("alice", "http", "auto")
    content = ("The limit is sixteen thousand characters. " * 400)[:16_000]
    written = await call_ok(client, "remember", {"content": content, "kind": "reference", "scope": "personal"})
    assert written["status"] == "created"


async def test_after_every_refusal_the_server_still_answers(clients: ClientPool, seed: Seed) -> None:
    client = await clients.get("alice", "http", "auto")
    read = await call_ok(client, "get_memory", {"id": seed.fact})
    assert read["memory"]["status"] == "live"
    result = await client.call_tool("recall", {"query": f"release checklist {NUL}"})
    assert result.is_error and text_of(result).startswith("validation_failed: query:")
    assert not (await client.call_tool("recall", {"query": "release checklist"})).is_error
