"""The OAuth flow against ``zm serve`` on PostgreSQL, connected as the unprivileged role (row-level security in force).

Registration, the code exchange, refresh and revocation look up clients,
codes and tokens before anyone is known to be calling, through the named
system pass; everything after acts for the token's user. Each step here
would fail (or see nothing) if one of those look-ups ran as nobody.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.mcp.helpers import Deployment, base_env, call_ok, connect, start_server, stop_server, unique, zm
from tests.mcp.oauth_flow import Browser, OAuthClient, mcp_status
from tests.pg import session_server
from zero_memory.store import open_store, system_tx

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Deployment, str]]:
    home = tmp_path_factory.mktemp("zm-oauth-pg")
    url = session_server().fresh_url()
    env = {**base_env(home), "ZM_DATABASE_URL": url}
    tokens = {name: json.loads(zm(env, "user", "add", name, "--json").stdout)["token"] for name in ("alice", "bob")}
    deployment = Deployment(home=home, env=env, tokens=tokens)
    process, deployment.url = start_server(env, home / "serve.log")
    deployment.log = home / "serve.log"
    try:
        yield deployment, url
    finally:
        stop_server(process)
        session_server().drop(url)


def tokens_of(deployment: Deployment, user: str) -> tuple[OAuthClient, dict[str, str]]:
    browser = Browser(deployment.url, deployment.tokens[user])
    try:
        client = OAuthClient(deployment.url, name=f"pytest-pg-{user}")
        assert client.register().status_code == 201
        return client, client.tokens(browser)
    finally:
        browser.close()


def test_the_server_connects_as_a_role_bound_by_row_security(served: tuple[Deployment, str]) -> None:
    _, url = served
    store = open_store(url)
    try:
        with store.tx() as tx:
            role = tx._query("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user")  # type: ignore[attr-defined]
    finally:
        store.close()
    assert role == [{"rolsuper": False, "rolbypassrls": False}]


async def test_oauth_tokens_speak_for_their_user_only(served: tuple[Deployment, str]) -> None:
    deployment, _ = served
    _, alices = tokens_of(deployment, "alice")
    _, bobs = tokens_of(deployment, "bob")
    note = unique("alice's note reached through OAuth on PostgreSQL")
    async with connect(deployment, "http", "auto", token=alices["access_token"]) as alice:
        memory = await call_ok(alice, "remember", {"content": note, "kind": "fact", "scope": "personal"})
        found = await call_ok(alice, "recall", {"query": note, "limit": 5})
    assert memory["id"] in [hit["id"] for hit in found["hits"]]
    async with connect(deployment, "http", "auto", user="bob", token=bobs["access_token"]) as bob:
        theirs = await call_ok(bob, "recall", {"query": note, "scopes": ["*"], "limit": 50})
    assert memory["id"] not in [hit["id"] for hit in theirs["hits"]]


def test_refresh_rotates_and_a_replayed_refresh_token_revokes_the_grant(served: tuple[Deployment, str]) -> None:
    deployment, url = served
    client, first = tokens_of(deployment, "alice")
    rotated = client.refresh(first["refresh_token"])
    assert rotated.status_code == 200, rotated.text
    assert mcp_status(deployment.url, rotated.json()["access_token"]) == 200
    replayed = client.refresh(first["refresh_token"])
    assert replayed.status_code == 400 and replayed.json()["error"] == "invalid_grant"
    assert mcp_status(deployment.url, rotated.json()["access_token"]) == 401
    store = open_store(url)
    try:
        with system_tx(store, "test") as tx:
            revoked = tx.audit_actions("oauth.revoke")
    finally:
        store.close()
    assert any(entry.payload.get("reason") == "refresh_token_replayed" for entry in revoked)


def test_the_operator_lists_and_revokes_a_users_authorized_clients(served: tuple[Deployment, str]) -> None:
    deployment, _ = served
    client, issued = tokens_of(deployment, "bob")
    listed = json.loads(zm(deployment.env, "user", "oauth", "list", "bob", "--json").stdout)
    assert client.client_id in [grant["client_id"] for grant in listed]
    zm(deployment.env, "user", "oauth", "revoke", "bob", "--all")
    assert mcp_status(deployment.url, issued["access_token"]) == 401
    assert json.loads(zm(deployment.env, "user", "oauth", "list", "bob", "--json").stdout) == []
