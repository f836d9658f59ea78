"""OAuth behind a TLS proxy (``ZM_PUBLIC_URL``), OAuth off without it, and expiry with a clock the test moves.

The first two run ``zm serve`` bound to every interface, as behind a proxy;
requests come to its loopback address with the ``Host`` the proxy would
forward. The last builds the same application in process on an app whose
clock the test sets, so codes and access tokens expire without waiting.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from starlette.testclient import TestClient

from tests.mcp.helpers import Deployment, start_server, stop_server
from tests.mcp.oauth_flow import CSRF_RE, REDIRECT, REQUEST_RE, challenge_of, field_of, query_of
from zero_memory.access import users
from zero_memory.app import App
from zero_memory.server.app import create_app

pytestmark = pytest.mark.slow

PUBLIC = "https://zm.example.com"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "proxy", "version": "1"}},
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def proxied(deployment: Deployment) -> Iterator[str]:
    log = deployment.home / "serve-proxied.log"
    process, url = start_server({**deployment.env, "ZM_PUBLIC_URL": PUBLIC}, log, "--host", "0.0.0.0")
    try:
        yield url
    finally:
        stop_server(process)


def test_behind_a_proxy_every_oauth_url_is_the_public_one(proxied: str, deployment: Deployment) -> None:
    # A forged X-Forwarded-Host changes nothing: every URL comes from ZM_PUBLIC_URL.
    proxy = {"Host": "zm.example.com", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "attacker.example"}
    resource = httpx.get(f"{proxied}/.well-known/oauth-protected-resource/mcp", headers=proxy).json()
    assert resource == {
        "resource": f"{PUBLIC}/mcp",
        "authorization_servers": [PUBLIC],
        "bearer_methods_supported": ["header"],
        "resource_name": "zero-memory",
    }
    server = httpx.get(f"{proxied}/.well-known/oauth-authorization-server", headers=proxy).json()
    assert server["issuer"] == PUBLIC and server["token_endpoint"] == f"{PUBLIC}/token"
    refused = httpx.post(f"{proxied}/mcp", headers={**proxy, **MCP_HEADERS}, json=INITIALIZE)
    expected = f'Bearer resource_metadata="{PUBLIC}/.well-known/oauth-protected-resource/mcp"'
    assert refused.status_code == 401 and refused.headers["www-authenticate"] == expected
    bearer = {**proxy, **MCP_HEADERS, "Authorization": f"Bearer {deployment.tokens['alice']}"}
    assert httpx.post(f"{proxied}/mcp", headers=bearer, json=INITIALIZE).status_code == 200, (
        "the public name passes the Host check without ZM_ALLOWED_HOSTS"
    )
    registered = httpx.post(f"{proxied}/register", headers=proxy, json={"redirect_uris": [REDIRECT]}).json()
    params = {
        "response_type": "code",
        "client_id": registered["client_id"],
        "redirect_uri": REDIRECT,
        "code_challenge": challenge_of(secrets.token_urlsafe(48)),
        "code_challenge_method": "S256",
        "resource": f"{PUBLIC}/mcp",
    }
    authorize = httpx.get(f"{proxied}/authorize", params=params, headers=proxy)
    assert authorize.status_code == 302 and authorize.headers["location"].startswith(f"{PUBLIC}/oauth/consent?")
    local = httpx.get(f"{proxied}/authorize", params={**params, "resource": f"{proxied}/mcp"}, headers=proxy)
    assert query_of(local.headers["location"])["error"] == "invalid_target", "tokens are for the public resource"
    printed = (deployment.home / "serve-proxied.log").read_text()
    assert f"issuer {PUBLIC}, resource {PUBLIC}/mcp" in printed and f"dashboard: {PUBLIC}/login/" in printed


def test_without_a_public_url_a_server_on_every_interface_keeps_oauth_off(deployment: Deployment) -> None:
    log = deployment.home / "serve-no-oauth.log"
    process, url = start_server(deployment.env, log, "--host", "0.0.0.0")
    try:
        assert httpx.get(f"{url}/.well-known/oauth-authorization-server").status_code == 404
        assert httpx.post(f"{url}/register", json={"redirect_uris": [REDIRECT]}).status_code in (403, 404, 405)
        refused = httpx.post(f"{url}/mcp", headers=MCP_HEADERS, json=INITIALIZE)
        assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
        bearer = {**MCP_HEADERS, "Authorization": f"Bearer {deployment.tokens['alice']}"}
        assert httpx.post(f"{url}/mcp", headers=bearer, json=INITIALIZE).status_code == 200
        assert "OAuth for remote MCP clients is off: set ZM_PUBLIC_URL" in log.read_text()
    finally:
        stop_server(process)


@pytest.fixture
def moving(make_app: Callable[..., App]) -> Iterator[tuple[TestClient, list[datetime], App]]:
    """The whole server in process on an app whose clock reads ``now[0]``."""
    now = [datetime(2026, 3, 1, 12, 0, tzinfo=UTC)]
    app = make_app(clock=lambda: now[0])
    site = "http://127.0.0.1:8787"
    asgi = create_app(app, public_url=site)
    with TestClient(asgi, base_url=site, follow_redirects=False) as client:
        yield client, now, app


def approved_code(client: TestClient, app: App, verifier: str) -> tuple[str, str]:
    """(client id, code): a public client registered, and alice's approval on the consent page."""
    client_id = client.post("/register", json={"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"})
    registered = client_id.json()["client_id"]
    with app.store.tx(write=True) as tx:
        token = users.issue_token(tx, "alice")
    login = client.get("/login")
    client.post("/login", data={"token": token, "csrf_token": field_of(CSRF_RE, login.text)})
    params = {
        "response_type": "code",
        "client_id": registered,
        "redirect_uri": REDIRECT,
        "code_challenge": challenge_of(verifier),
        "code_challenge_method": "S256",
    }
    consent = client.get(client.get("/authorize", params=params).headers["location"])
    answer = client.post(
        "/oauth/consent",
        data={
            "csrf_token": field_of(CSRF_RE, consent.text),
            "request": field_of(REQUEST_RE, consent.text),
            "decision": "approve",
        },
    )
    return registered, query_of(answer.headers["location"])["code"]


def exchange(client: TestClient, client_id: str, code: str, verifier: str) -> httpx.Response:
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": REDIRECT,
        "client_id": client_id,
        "code_verifier": verifier,
    }
    return client.post("/token", data=form)


def test_a_code_past_its_five_minutes_is_refused(moving: tuple[TestClient, list[datetime], App]) -> None:
    client, now, app = moving
    verifier = secrets.token_urlsafe(48)
    client_id, code = approved_code(client, app, verifier)
    now[0] += timedelta(minutes=5)
    late = exchange(client, client_id, code, verifier)
    assert late.status_code == 400 and late.json()["error"] == "invalid_grant"
    assert "expired" in late.json()["error_description"]
    now[0] -= timedelta(seconds=1)
    assert exchange(client, client_id, code, verifier).status_code == 200, "a second earlier it was still good"


def test_an_access_token_past_its_hour_is_refused_at_mcp(moving: tuple[TestClient, list[datetime], App]) -> None:
    client, now, app = moving
    verifier = secrets.token_urlsafe(48)
    client_id, code = approved_code(client, app, verifier)
    tokens = exchange(client, client_id, code, verifier).json()
    bearer = {**MCP_HEADERS, "Authorization": f"Bearer {tokens['access_token']}"}
    now[0] += timedelta(minutes=59)
    assert client.post("/mcp", headers=bearer, json=INITIALIZE).status_code == 200
    now[0] += timedelta(minutes=1)
    assert client.post("/mcp", headers=bearer, json=INITIALIZE).status_code == 401
    renewed = client.post(
        "/token", data={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": client_id}
    )
    assert renewed.status_code == 200
    fresh = {**MCP_HEADERS, "Authorization": f"Bearer {renewed.json()['access_token']}"}
    assert client.post("/mcp", headers=fresh, json=INITIALIZE).status_code == 200
