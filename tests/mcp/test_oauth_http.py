"""The OAuth endpoints of the session's ``zm serve``, over HTTP: metadata, registration, the consent step, tokens.

The happy path and the main refusals through the TypeScript SDK are in
test_js_oauth.py; these are the protocol's edges, with a public client (PKCE
only) and a confidential one, and the dashboard's consent page driven by a
signed-in HTTP session.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import httpx
import pytest

from tests.mcp.helpers import Deployment
from tests.mcp.oauth_flow import CSRF_RE, REQUEST_RE, Browser, OAuthClient, field_of, mcp_status, query_of
from zero_memory.store import Store

pytestmark = pytest.mark.slow


@pytest.fixture
def alice(http_server: Deployment) -> Iterator[Browser]:
    browser = Browser(http_server.url, http_server.tokens["alice"])
    yield browser
    browser.close()


@pytest.fixture
def client(http_server: Deployment) -> OAuthClient:
    registered = OAuthClient(http_server.url, name="pytest-public")
    assert registered.register().status_code == 201
    return registered


def test_the_metadata_names_the_issuer_the_resource_and_the_endpoints(http_server: Deployment) -> None:
    url = http_server.url
    resource = httpx.get(f"{url}/.well-known/oauth-protected-resource/mcp").json()
    assert resource["resource"] == f"{url}/mcp" and resource["authorization_servers"] == [url]
    assert httpx.get(f"{url}/.well-known/oauth-protected-resource").json() == resource
    server = httpx.get(f"{url}/.well-known/oauth-authorization-server").json()
    assert server["issuer"] == url
    assert {k: server[k] for k in ("authorization_endpoint", "token_endpoint", "registration_endpoint")} == {
        "authorization_endpoint": f"{url}/authorize",
        "token_endpoint": f"{url}/token",
        "registration_endpoint": f"{url}/register",
    }
    assert server["code_challenge_methods_supported"] == ["S256"]
    assert "none" in server["token_endpoint_auth_methods_supported"]
    preflight = httpx.options(
        f"{url}/.well-known/oauth-authorization-server",
        headers={"Origin": "http://localhost:6274", "Access-Control-Request-Method": "GET"},
    )
    assert preflight.headers["access-control-allow-origin"] in ("*", "http://localhost:6274")
    # Served as configured without the serializer's complaint about a string where it expected a URL.
    assert http_server.log is not None and "PydanticSerializationUnexpectedValue" not in http_server.log.read_text()


def test_a_plain_bearer_token_and_an_oauth_token_both_open_mcp(
    http_server: Deployment, client: OAuthClient, alice: Browser
) -> None:
    assert mcp_status(http_server.url, http_server.tokens["alice"]) == 200
    tokens = client.tokens(alice)
    assert mcp_status(http_server.url, tokens["access_token"]) == 200
    assert mcp_status(http_server.url, tokens["refresh_token"]) == 401, "a refresh token is not an access token"


@pytest.mark.parametrize(
    ("metadata", "error", "detail"),
    [
        ({"redirect_uris": ["http://evil.example/cb"]}, "invalid_redirect_uri", "loopback"),
        ({"redirect_uris": ["javascript:alert(1)"]}, "invalid_redirect_uri", "javascript"),
        ({"redirect_uris": ["https://app.example/cb#x"]}, "invalid_redirect_uri", "fragment"),
        ({"redirect_uris": []}, "invalid_client_metadata", "redirect_uris"),
        ({"redirect_uris": "not a list"}, "invalid_client_metadata", "redirect_uris"),
        ({"grant_types": ["client_credentials"]}, "invalid_client_metadata", "authorization_code"),
        ({"token_endpoint_auth_method": "private_key_jwt"}, "invalid_client_metadata", "token_endpoint_auth_method"),
    ],
)
def test_registration_refuses_bad_metadata_and_stores_no_client(
    http_server: Deployment, store: Store, metadata: dict[str, object], error: str, detail: str
) -> None:
    name = "refused-" + secrets.token_hex(4)
    answer = OAuthClient(http_server.url, name=name).register(**metadata)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"] == error and detail in answer.json()["error_description"]
    with store.tx() as tx:
        rows = tx._query("SELECT id FROM oauth_clients WHERE name = ?", (name,))  # type: ignore[attr-defined]
    assert rows == []


def test_authorize_refuses_an_unknown_client_and_a_foreign_redirect_without_redirecting(
    http_server: Deployment, client: OAuthClient
) -> None:
    verifier = secrets.token_urlsafe(48)
    unknown = httpx.get(client.authorization_url(verifier, client_id="no-such-client"))
    assert unknown.status_code == 400 and unknown.json()["error"] == "invalid_request"
    for other in ("http://127.0.0.1:53682/other", "http://127.0.0.1:53683/callback", "http://localhost:53682/callback"):
        answer = httpx.get(client.authorization_url(verifier, redirect_uri=other))
        assert answer.status_code == 400 and "location" not in answer.headers, other
        assert answer.json()["error"] == "invalid_request"


@pytest.mark.parametrize(
    ("overrides", "error"),
    [
        ({"code_challenge": ""}, "invalid_request"),
        ({"code_challenge": "too-short"}, "invalid_request"),
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"response_type": "token"}, "unsupported_response_type"),
        ({"resource": "https://elsewhere.example/mcp"}, "invalid_target"),
        ({"scope": "admin"}, "invalid_scope"),
    ],
)
def test_authorize_sends_other_refusals_back_to_the_client(
    client: OAuthClient, overrides: dict[str, str], error: str
) -> None:
    answer = httpx.get(client.authorization_url(secrets.token_urlsafe(48), state="keep-me", **overrides))
    assert answer.status_code == 302, answer.text
    assert answer.headers["location"].startswith(client.redirect_uri + "?")
    back = query_of(answer.headers["location"])
    assert back["error"] == error and back["state"] == "keep-me"
    assert "code" not in back


def test_a_visitor_signs_in_first_and_comes_back_to_the_consent_page(
    http_server: Deployment, client: OAuthClient
) -> None:
    with httpx.Client(base_url=http_server.url, follow_redirects=False, timeout=30) as visitor:
        consent = visitor.get(client.authorization_url(secrets.token_urlsafe(48))).headers["location"]
        answer = visitor.get(consent)
        assert answer.status_code == 303 and answer.headers["location"].startswith("/login?next=/oauth/consent")
        login = visitor.get(answer.headers["location"])
        next_page = login.text.split('name="next" value="')[1].split('"')[0].replace("&amp;", "&")
        done = visitor.post(
            "/login",
            data={"token": http_server.tokens["bob"], "csrf_token": field_of(CSRF_RE, login.text), "next": next_page},
        )
        assert done.status_code == 303 and done.headers["location"].startswith("/oauth/consent?request=")
        page = visitor.get(done.headers["location"])
    assert page.status_code == 200 and "pytest-public" in page.text and "bob" in page.text
    assert "form-action 'self' http://127.0.0.1:53682;" in page.headers["content-security-policy"]


def test_denying_sends_access_denied_back_and_grants_nothing(client: OAuthClient, alice: Browser, store: Store) -> None:
    landed = query_of(alice.decide(client.authorization_url(secrets.token_urlsafe(48), state="s-deny"), "deny"))
    assert landed == {"error": "access_denied", "state": "s-deny"}
    with store.tx() as tx:
        grants = tx._query("SELECT id FROM oauth_grants WHERE client_id = ?", (client.client_id,))  # type: ignore[attr-defined]
        denials = [e for e in tx.audit_actions("oauth.deny") if e.payload["client_id"] == client.client_id]
    assert grants == [] and len(denials) == 1


def test_the_consent_form_needs_its_csrf_token_and_an_intact_request(client: OAuthClient, alice: Browser) -> None:
    page = alice.consent_page(client.authorization_url(secrets.token_urlsafe(48)))
    signed, csrf = field_of(REQUEST_RE, page.text), field_of(CSRF_RE, page.text)
    for data in (
        {"request": signed, "decision": "approve"},
        {"request": signed, "decision": "approve", "csrf_token": "forged"},
    ):
        answer = alice.http.post("/oauth/consent", data=data)
        assert answer.status_code == 403 and "location" not in answer.headers
    tampered = signed[:-3] + ("AAA" if not signed.endswith("AAA") else "BBB")
    answer = alice.http.post("/oauth/consent", data={"request": tampered, "decision": "approve", "csrf_token": csrf})
    assert answer.status_code == 400 and "validation_failed" in answer.text and "location" not in answer.headers
    assert alice.http.get("/oauth/consent", params={"request": "garbage"}).status_code == 400


def test_the_code_exchange_checks_the_redirect_uri_and_the_client(
    http_server: Deployment, client: OAuthClient, alice: Browser
) -> None:
    code, verifier = client.code(alice)
    other_uri = client.exchange(code, verifier, redirect_uri="http://127.0.0.1:53682/other")
    assert other_uri.status_code == 400 and other_uri.json()["error"] == "invalid_request"
    other = OAuthClient(http_server.url, name="pytest-other")
    other.register()
    stolen = other.exchange(code, verifier)
    assert stolen.status_code == 400 and stolen.json()["error"] == "invalid_grant"
    assert client.exchange(code, verifier).status_code == 200, "the refusals did not spend the code"


def test_a_confidential_client_must_present_its_secret(http_server: Deployment, alice: Browser) -> None:
    confidential = OAuthClient(http_server.url, name="pytest-confidential")
    answer = confidential.register(token_endpoint_auth_method="client_secret_post")
    assert answer.status_code == 201 and confidential.secret
    code, verifier = confidential.code(alice)
    secret = confidential.secret
    for wrong in ("", secret[:-1] + ("0" if secret[-1] != "0" else "1")):
        confidential.secret = wrong
        refused = confidential.exchange(code, verifier)
        assert refused.status_code == 401 and refused.json()["error"] == "invalid_client"
        assert secret not in refused.text
    confidential.secret = secret
    assert confidential.exchange(code, verifier).status_code == 200


def test_a_client_revokes_its_own_token_at_the_revocation_endpoint(
    http_server: Deployment, client: OAuthClient, alice: Browser
) -> None:
    tokens = client.tokens(alice)
    answer = client.http.post(
        f"{http_server.url}/revoke", data={"token": tokens["refresh_token"], "client_id": client.client_id}
    )
    assert answer.status_code == 200
    assert mcp_status(http_server.url, tokens["access_token"]) == 401
    assert client.refresh(tokens["refresh_token"]).json()["error"] == "invalid_grant"
    unknown = client.http.post(f"{http_server.url}/revoke", data={"token": "zmrt_x_y", "client_id": client.client_id})
    assert unknown.status_code == 200, "RFC 7009: an unknown token is no error"
    nameless = client.http.post(f"{http_server.url}/revoke", data={"client_id": client.client_id})
    assert nameless.status_code == 400 and nameless.json()["error"] == "invalid_request"
    stranger = client.http.post(f"{http_server.url}/revoke", data={"token": "x", "client_id": "no-such-client"})
    assert stranger.status_code == 401 and stranger.json()["error"] == "invalid_client"


def grants_on(page: str, client_id: str) -> list[str]:
    """The grant ids the Clients page offers to revoke for ``client_id``."""
    rows = [row for row in page.split("<tr>") if client_id in row]
    return [row.split('action="/clients/')[1].split("/")[0] for row in rows if 'action="/clients/' in row]


def test_the_clients_page_lists_and_revokes_only_the_users_own_grants(
    http_server: Deployment, client: OAuthClient, alice: Browser
) -> None:
    bob = Browser(http_server.url, http_server.tokens["bob"])
    try:
        bobs = client.tokens(bob)
        mine = client.tokens(alice)
        page = alice.http.get("/clients")
        assert page.status_code == 200 and "pytest-public" in page.text
        [grant_id] = grants_on(page.text, client.client_id)
        [bob_grant] = grants_on(bob.http.get("/clients").text, client.client_id)
        assert bob_grant != grant_id
        csrf = field_of(CSRF_RE, page.text)
        foreign = alice.http.post(f"/clients/{bob_grant}/revoke", data={"csrf_token": csrf})
        missing = alice.http.post("/clients/grant_01zzzzzzzzzzzzzzzzzzzzzzzz/revoke", data={"csrf_token": csrf})
        assert foreign.status_code == missing.status_code == 404
        assert foreign.text.replace(bob_grant, "<id>") == missing.text.replace(
            "grant_01zzzzzzzzzzzzzzzzzzzzzzzz", "<id>"
        )
        assert mcp_status(http_server.url, bobs["access_token"]) == 200
        done = alice.http.post(f"/clients/{grant_id}/revoke", data={"csrf_token": csrf})
        assert done.status_code == 303 and done.headers["location"] == "/clients"
        assert mcp_status(http_server.url, mine["access_token"]) == 401
        assert grants_on(alice.http.get("/clients").text, client.client_id) == []
        assert mcp_status(http_server.url, bobs["access_token"]) == 200
    finally:
        bob.close()
