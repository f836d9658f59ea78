"""Driving the OAuth flow of a running ``zm serve`` over HTTP: a user's browser session and a client.

``Browser`` is a person at the dashboard: it logs in with the user's bearer
token (the login form, CSRF and all), follows an authorization URL to the
consent page and presses Approve or Deny, and reports where the server sent
it. ``OAuthClient`` is a public client doing what the MCP authorization spec
asks of one: discovery, dynamic registration, PKCE S256, the code exchange,
refresh.
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from tests.mcp.helpers import Deployment

CSRF_RE = re.compile(r'name="csrf_token" value="([^"]+)"')
REQUEST_RE = re.compile(r'name="request" value="([^"]+)"')
REDIRECT = "http://127.0.0.1:53682/callback"


def field_of(pattern: re.Pattern[str], html: str) -> str:
    found = pattern.search(html)
    assert found, f"the page has no field {pattern.pattern}:\n{html[:2000]}"
    return found.group(1)


def query_of(url: str) -> dict[str, str]:
    return {name: values[0] for name, values in parse_qs(urlsplit(url).query).items()}


def challenge_of(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")


class Browser:
    """One user's dashboard session on the server at ``url``."""

    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.http = httpx.Client(base_url=url, follow_redirects=False, timeout=60)
        login = self.http.get("/login")
        done = self.http.post("/login", data={"token": token, "csrf_token": field_of(CSRF_RE, login.text)})
        assert done.status_code == 303, done.text

    def consent_page(self, authorization_url: str) -> httpx.Response:
        """Follow ``/authorize`` to the consent page (which the signed-in user sees at once)."""
        answer = self.http.get(authorization_url)
        assert answer.status_code == 302, (answer.status_code, answer.text)
        page = self.http.get(answer.headers["location"])
        assert page.status_code == 200, (page.status_code, page.text[:2000])
        return page

    def decide(self, authorization_url: str, decision: str = "approve") -> str:
        """Where the server sends the browser after the user's decision: the client's redirect URI."""
        page = self.consent_page(authorization_url)
        answer = self.http.post(
            "/oauth/consent",
            data={
                "csrf_token": field_of(CSRF_RE, page.text),
                "request": field_of(REQUEST_RE, page.text),
                "decision": decision,
            },
        )
        assert answer.status_code == 303, (answer.status_code, answer.text[:2000])
        return answer.headers["location"]

    def close(self) -> None:
        self.http.close()


@dataclass
class OAuthClient:
    """A public client registered with the server at ``url`` (its issuer)."""

    url: str
    name: str = "pytest-oauth"
    redirect_uri: str = REDIRECT
    client_id: str = ""
    secret: str | None = None
    http: httpx.Client = field(default_factory=lambda: httpx.Client(follow_redirects=False, timeout=60))

    @property
    def resource(self) -> str:
        return f"{self.url}/mcp"

    def register(self, **metadata: Any) -> httpx.Response:
        body = {
            "client_name": self.name,
            "redirect_uris": [self.redirect_uri],
            "token_endpoint_auth_method": "none",
            **metadata,
        }
        answer = self.http.post(f"{self.url}/register", json=body)
        if answer.status_code == 201:
            self.client_id = answer.json()["client_id"]
            self.secret = answer.json().get("client_secret")
        return answer

    def authorization_url(self, verifier: str, **overrides: str) -> str:
        params = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": self.redirect_uri,
            "code_challenge": challenge_of(verifier),
            "code_challenge_method": "S256",
            "state": "st-" + secrets.token_hex(4),
            "resource": self.resource,
            **overrides,
        }
        return str(httpx.URL(f"{self.url}/authorize", params=params))

    def token(self, **form: str) -> httpx.Response:
        body = {"client_id": self.client_id, **form}
        if self.secret:
            body["client_secret"] = self.secret
        return self.http.post(f"{self.url}/token", data=body)

    def exchange(self, code: str, verifier: str | None, **extra: str) -> httpx.Response:
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": self.redirect_uri, **extra}
        if verifier is not None:
            form["code_verifier"] = verifier
        return self.token(**form)

    def refresh(self, refresh_token: str) -> httpx.Response:
        return self.token(grant_type="refresh_token", refresh_token=refresh_token)

    def code(self, browser: Browser) -> tuple[str, str]:
        """(code, verifier): a fresh authorization approved by ``browser``'s user."""
        verifier = secrets.token_urlsafe(48)
        landed = query_of(browser.decide(self.authorization_url(verifier)))
        assert "code" in landed, landed
        return landed["code"], verifier

    def tokens(self, browser: Browser) -> dict[str, Any]:
        """Access and refresh tokens for ``browser``'s user, through the whole flow."""
        code, verifier = self.code(browser)
        answer = self.exchange(code, verifier, resource=self.resource)
        assert answer.status_code == 200, answer.text
        tokens: dict[str, Any] = answer.json()
        return tokens


def oauth_access_token(deployment: Deployment, user: str) -> str:
    """An access token ``user`` approved for a fresh public client, through the whole flow."""
    browser = Browser(deployment.url, deployment.tokens[user])
    try:
        client = OAuthClient(deployment.url, name=f"pytest-{user}")
        assert client.register().status_code == 201
        token: str = client.tokens(browser)["access_token"]
    finally:
        browser.close()
    return token


def mcp_status(url: str, token: str) -> int:
    """The HTTP status ``/mcp`` answers an initialize request with, under ``token``."""
    answer = httpx.post(
        f"{url}/mcp",
        headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"},
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        timeout=60,
    )
    return answer.status_code
