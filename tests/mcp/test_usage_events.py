"""Every tool call is a usage event with the client's name; a remembered memory carries it as agent_name."""

from __future__ import annotations

from typing import Any

import pytest

from tests.mcp.helpers import ALL_CONNECTIONS, Deployment, call_error, call_ok, connect, recorded, unique
from zero_memory.store import Store, system_tx

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.mark.parametrize("via", ALL_CONNECTIONS)
async def test_calls_are_recorded_with_the_client_name(
    http_server: Deployment, store: Store, via: tuple[str, str]
) -> None:
    name = unique("usage-client").replace(" ", "")
    async with connect(http_server, *via, client_name=name) as client:
        old = await call_ok(
            client,
            "remember",
            {"content": unique("Builds use Bazel"), "kind": "fact", "scope": "personal", "session_id": unique("s")},
        )
        new = await call_ok(
            client,
            "remember",
            {
                "content": unique("Builds use Buck2 now"),
                "kind": "fact",
                "scope": "personal",
                "session_id": unique("s"),
                "links": [{"type": "supersedes", "dst": old["id"]}],
            },
        )
        row = await call_ok(client, "get_memory", {"id": new["id"]})
        await call_error(client, "recall", {"query": "q", "bogus": True})
        await call_error(client, "forget", {"id": "mem_01zzzzzzzzzzzzzzzzzzzzzzzx"})
    assert row["memory"]["agent_name"] == name
    assert row["memory"]["source"]["client"] == name

    def read() -> list[dict[str, Any]]:
        with system_tx(store, "test") as tx:
            return [e for e in tx.usage_events() if e["client"] == name]

    events = recorded(read, lambda found: len(found) >= 5)
    assert [(e["user_id"], e["tool"], e["outcome"], bool(e["declared_supersede"])) for e in events] == [
        ("alice", "remember", "ok", False),
        ("alice", "remember", "ok", True),
        ("alice", "get_memory", "ok", False),
        ("alice", "recall", "validation_failed", False),
        ("alice", "forget", "not_found", False),
    ]


async def test_bobs_calls_are_recorded_as_bob(http_server: Deployment, store: Store) -> None:
    name = unique("bob-client").replace(" ", "")
    async with connect(http_server, "http", "legacy", user="bob", client_name=name) as client:
        await call_ok(client, "recall", {"query": "anything"})

    def read() -> list[tuple[str, str]]:
        with system_tx(store, "test") as tx:
            return [(e["user_id"], e["tool"]) for e in tx.usage_events(tool="recall") if e["client"] == name]

    assert recorded(read, bool) == [("bob", "recall")]
