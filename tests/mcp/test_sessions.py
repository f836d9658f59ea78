"""The transport session stands in for a missing ``session_id``: attach on the first hint, write there.

stdio has one session per ``zm mcp`` process and legacy HTTP the
``mcp-session-id`` of its handshake; the 2026 protocol (``auto`` over HTTP)
has no sessions, so there a client that wants one passes ``session_id``.
"""

from __future__ import annotations

import pytest

from tests.mcp.helpers import ALL_CONNECTIONS, Deployment, call_error, call_ok, connect, unique

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.mark.parametrize("via", ALL_CONNECTIONS)
async def test_the_transport_session_attaches_on_the_first_hint(http_server: Deployment, via: tuple[str, str]) -> None:
    transport, mode = via
    async with connect(http_server, transport, mode, client_name="session-test") as client:
        recalled = await call_ok(client, "recall", {"query": "start of a task", "project_hint": "/work/src/orders"})
        arguments = {"content": unique("Orders are immutable once paid"), "kind": "fact"}
        if transport == "http" and mode == "auto":
            assert recalled["session"] == {"attached_project": None, "session_id": None}
            text = await call_error(client, "remember", arguments)
            assert text.startswith("validation_failed: scope_target_required:")
            return
        assert recalled["session"]["attached_project"] == "proj.alice.orders"
        transport_session = recalled["session"]["session_id"]
        assert transport_session
        written = await call_ok(client, "remember", arguments)
        assert written["scope"] == "proj.alice.orders"
        assert written["session"] == {"attached_project": "proj.alice.orders", "session_id": transport_session}
        row = await call_ok(client, "get_memory", {"id": written["id"]})
        assert row["memory"]["source"]["client_session_id"] == transport_session


async def test_two_stdio_processes_are_two_sessions(http_server: Deployment) -> None:
    async with connect(http_server, "stdio", "legacy") as first, connect(http_server, "stdio", "legacy") as second:
        one = await call_ok(first, "recall", {"query": "x", "project_hint": "/work/src/one"})
        two = await call_ok(second, "recall", {"query": "x", "project_hint": "/work/src/two"})
        assert one["session"]["session_id"] != two["session"]["session_id"]
        assert two["session"]["attached_project"] == "proj.alice.two"
