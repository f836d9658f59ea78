"""The HTTP edge of ``zm serve``: bearer tokens, /healthz, the Host and Origin checks, session ownership."""

from __future__ import annotations

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from tests.mcp.helpers import Deployment, connect

pytestmark = pytest.mark.slow

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw-http", "version": "1"}},
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def post(server: Deployment, headers: dict[str, str], body: object = INITIALIZE) -> httpx.Response:
    return httpx.post(f"{server.url}/mcp", json=body, headers={**ACCEPT, **headers}, timeout=10)


def test_healthz_needs_no_token(http_server: Deployment) -> None:
    response = httpx.get(f"{http_server.url}/healthz")
    assert response.status_code == 200 and response.json()["status"] == "ok"


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        "Bearer zm_000000000000_notavalidsecretnotavalidsecretnotavalidsec",
        "Bearer",
        "Basic YWxpY2U6cGFzcw==",
        "Token {alice}",
        "Bearer {alice} extra",
        "{alice}",
    ],
    ids=["missing", "wrong", "scheme-only", "basic", "other-scheme", "two-words", "no-scheme"],
)
def test_a_missing_wrong_or_malformed_token_is_a_bare_401(http_server: Deployment, authorization: str | None) -> None:
    """The same answer whatever was wrong; it only names where a client learns how to get a token (RFC 9728)."""
    headers = {} if authorization is None else {"Authorization": authorization.format(**http_server.tokens)}
    response = post(http_server, headers)
    assert response.status_code == 401
    metadata = f"{http_server.url}/.well-known/oauth-protected-resource/mcp"
    assert response.headers["www-authenticate"] == f'Bearer resource_metadata="{metadata}"'
    assert response.text == "unauthorized"


def test_a_wrong_secret_for_a_real_token_id_is_a_bare_401(http_server: Deployment) -> None:
    real = http_server.tokens["alice"]
    forged = real[:-4] + ("AAAA" if not real.endswith("AAAA") else "BBBB")
    response = post(http_server, {"Authorization": f"Bearer {forged}"})
    assert (response.status_code, response.text) == (401, "unauthorized")


def test_two_authorization_headers_are_refused(http_server: Deployment) -> None:
    headers = [
        ("Authorization", f"Bearer {http_server.tokens['alice']}"),
        ("Authorization", f"Bearer {http_server.tokens['bob']}"),
        *ACCEPT.items(),
    ]
    response = httpx.post(f"{http_server.url}/mcp", json=INITIALIZE, headers=headers, timeout=10)
    assert response.status_code == 401


@pytest.mark.parametrize("authorization", ["Bearer {alice}", "bearer {alice}", "Bearer  {alice}"])
def test_a_valid_token_opens_a_session(http_server: Deployment, authorization: str) -> None:
    response = post(http_server, {"Authorization": authorization.format(**http_server.tokens)})
    assert response.status_code == 200
    assert response.headers["mcp-session-id"]


def test_another_users_token_cannot_use_a_session(http_server: Deployment) -> None:
    opened = post(http_server, {"Authorization": f"Bearer {http_server.tokens['alice']}"})
    session = opened.headers["mcp-session-id"]
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    hijack = post(
        http_server,
        {
            "Authorization": f"Bearer {http_server.tokens['bob']}",
            "mcp-session-id": session,
            "mcp-protocol-version": "2025-11-25",
        },
        listing,
    )
    assert hijack.status_code == 404


@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("127.0.0.1:{port}", 200),
        ("localhost:{port}", 200),
        ("localhost", 200),
        ("127.0.0.1:1", 200),
        ("attacker.example:{port}", 421),
        ("attacker.example", 421),
    ],
)
def test_the_host_check_admits_loopback_names_on_any_port(http_server: Deployment, host: str, status: int) -> None:
    port = http_server.url.rsplit(":", 1)[1]
    response = post(
        http_server, {"Authorization": f"Bearer {http_server.tokens['alice']}", "Host": host.format(port=port)}
    )
    assert response.status_code == status


def test_a_foreign_origin_is_refused(http_server: Deployment) -> None:
    response = post(
        http_server, {"Authorization": f"Bearer {http_server.tokens['alice']}", "Origin": "http://attacker.example"}
    )
    assert response.status_code == 403


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_sdk_client_cannot_connect_with_a_wrong_token(http_server: Deployment, mode: str) -> None:
    with pytest.raises(BaseException) as raised:
        async with connect(http_server, "http", mode, token="zm_000000000000_wrong"):
            pass
    assert (
        raised.group_contains(MCPError)
        if isinstance(raised.value, BaseExceptionGroup)
        else isinstance(raised.value, MCPError)
    )
