"""A revoked bearer token is refused by a running ``zm serve`` on the very next call, with no restart."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from tests.mcp.helpers import base_env, start_server, stop_server, zm

pytestmark = pytest.mark.slow

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "revocation-test", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def call(url: str, token: str) -> httpx.Response:
    """One 2026-07-28 tools/call of list_conflicts, as the SDK client sends it."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "list_conflicts", "arguments": {}, "_meta": META},
    }
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "list_conflicts",
    }
    return httpx.post(f"{url}/mcp", json=body, headers=headers, timeout=30)


def test_a_revoked_token_is_refused_on_the_next_call_and_its_replacement_works(tmp_path: Path) -> None:
    env = base_env(tmp_path)
    old = json.loads(zm(env, "user", "add", "carol", "--json").stdout)["token"]
    process, url = start_server(env, tmp_path / "serve.log")
    try:
        for _ in range(3):  # a token the server has just accepted, several times over
            answer = call(url, old)
            assert answer.status_code == 200 and not answer.json()["result"]["isError"]
        new = json.loads(zm(env, "user", "token", "carol", "--revoke-others", "--json").stdout)["token"]
        refused = call(url, old)
        assert (refused.status_code, refused.text) == (401, "unauthorized")
        assert call(url, new).status_code == 200
        assert call(url, old).status_code == 401
    finally:
        stop_server(process)
