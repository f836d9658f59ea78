"""The transport session stands in for a missing ``session_id``: attach on the first hint, write there.

stdio has one session per ``zm mcp`` process and legacy HTTP the
``mcp-session-id`` of its handshake; the 2026 protocol (``auto`` over HTTP)
has no sessions, so there a client that wants one passes ``session_id``.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import httpx
import pytest

from tests.mcp.helpers import ALL_CONNECTIONS, Deployment, call_error, call_ok, connect, unique

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


def a_repository(parent: Path) -> Path:
    """A git repository (as far as zero-memory reads one) with a folder name no other test uses."""
    repo = parent / f"shop{uuid.uuid4().hex[:8]}"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text("[core]\n")
    (repo / "src").mkdir()
    return repo


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


async def test_a_stdio_server_started_in_a_repository_writes_to_its_project(
    http_server: Deployment, tmp_path: Path
) -> None:
    """As Claude Code and Codex start it: in the workspace, with no session id or project on any call."""
    repo = a_repository(tmp_path)
    async with connect(http_server, "stdio", "legacy", cwd=repo / "src") as client:
        written = await call_ok(client, "remember", {"content": unique("Carts expire after a day"), "kind": "fact"})
        assert written["scope"] == f"proj.alice.{repo.name}" == written["session"]["attached_project"]
    async with connect(http_server, "stdio", "legacy") as elsewhere:
        found = await call_ok(elsewhere, "recall", {"query": "carts expire", "project_hint": str(repo)})
        assert written["id"] in [hit["id"] for hit in found["hits"]]


async def test_claude_codes_project_dir_names_the_repository(http_server: Deployment, tmp_path: Path) -> None:
    repo = a_repository(tmp_path)
    environ = {"CLAUDE_PROJECT_DIR": str(repo)}
    async with connect(http_server, "stdio", "legacy", cwd=tmp_path, environ=environ) as client:
        written = await call_ok(client, "remember", {"content": unique("Prices are in cents"), "kind": "fact"})
        assert written["scope"] == f"proj.alice.{repo.name}"


async def test_a_stdio_server_in_no_repository_creates_no_project(http_server: Deployment, tmp_path: Path) -> None:
    downloads = tmp_path / "Downloads"
    downloads.mkdir()
    async with connect(http_server, "stdio", "legacy", cwd=downloads) as client:
        briefed = await call_error(client, "build_context", {"project_hint": str(downloads)})
        assert briefed.startswith("validation_failed: project_hint_unresolvable:")
        refused = await call_error(client, "remember", {"content": unique("Where does this go"), "kind": "fact"})
        assert refused.startswith("validation_failed: scope_target_required:")
        assert 'scope ("personal"' in refused and "project_hint" in refused
        written = await call_ok(
            client, "remember", {"content": unique("I prefer tabs"), "kind": "preference", "scope": "personal"}
        )
        assert written["scope"] == "user.alice" and written["session"]["attached_project"] is None


async def test_an_http_session_attaches_to_the_repository_of_the_clients_roots(
    http_server: Deployment, tmp_path: Path
) -> None:
    """As Claude Code answers roots/list: one root, its working directory."""
    repo = a_repository(tmp_path)
    async with connect(http_server, "http", "legacy", roots=[repo / "src"]) as client:
        written = await call_ok(client, "remember", {"content": unique("Refunds take a week"), "kind": "fact"})
        assert written["scope"] == f"proj.alice.{repo.name}" == written["session"]["attached_project"]
    downloads = tmp_path / "Downloads"
    downloads.mkdir()
    async with connect(http_server, "http", "legacy", roots=[downloads]) as client:
        refused = await call_error(client, "remember", {"content": unique("Where does this go"), "kind": "fact"})
        assert refused.startswith("validation_failed: scope_target_required:")


async def test_the_roots_question_reaches_a_client_that_opens_no_standalone_stream(
    http_server: Deployment, tmp_path: Path
) -> None:
    """The server asks for roots on the tool call's own stream: the standalone GET stream is optional for a
    client, and one that opens it may not have done so when its first call arrives."""
    repo = a_repository(tmp_path)
    headers = {
        "Authorization": f"Bearer {http_server.tokens['alice']}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {"roots": {"listChanged": False}},
            "clientInfo": {"name": "no-standalone-stream", "version": "1"},
        },
    }
    async with httpx.AsyncClient(base_url=http_server.url, headers=headers, timeout=30) as http:
        opened = await http.post("/mcp", json=initialize)
        headers = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
        await http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
        content = unique("Invoices are numbered per year")
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "remember", "arguments": {"content": content, "kind": "fact"}},
        }
        asked: list[str] = []
        async with http.stream("POST", "/mcp", json=call, headers=headers) as stream:
            async for line in stream.aiter_lines():
                if not line.startswith("data:"):
                    continue
                message = json.loads(line.removeprefix("data:"))
                if message.get("method") == "roots/list":
                    asked.append(message["method"])
                    roots = {"roots": [{"uri": (repo / "src").as_uri()}]}
                    answer = {"jsonrpc": "2.0", "id": message["id"], "result": roots}
                    await http.post("/mcp", json=answer, headers=headers)
                elif message.get("id") == 2:
                    result = message["result"]
                    break
    assert asked == ["roots/list"]
    assert not result.get("isError"), result
    written = result["structuredContent"]
    assert written["scope"] == f"proj.alice.{repo.name}" == written["session"]["attached_project"]
