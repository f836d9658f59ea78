"""The OAuth consent step and the Clients page in Chromium, against a real ``zm serve``.

A client registers over HTTP and sends the browser to ``/authorize``; the
browser signs in with alice's token, sees the consent page, approves or
denies, and lands on the client's redirect URI (intercepted: nothing listens
there), which proves the page's security policy lets the form lead there.
Then the Clients page lists the grant and revokes it.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Route, expect

from tests.mcp.oauth_flow import REDIRECT, OAuthClient, mcp_status, query_of
from tests.web.conftest import DESKTOP, Site, start_site
from zero_memory.embedding import Embedder

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site(browser: Browser, tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Site]:
    with start_site(tmp_path_factory.mktemp("oauth-dashboard"), embedder) as running:
        yield running


@pytest.fixture
def context(browser: Browser, site: Site) -> Iterator[BrowserContext]:
    opened = browser.new_context(base_url=site.url, viewport=DESKTOP)
    opened.set_default_timeout(15_000)
    yield opened
    opened.close()


def catch_redirects(page: Page) -> list[str]:
    """Answer for the client's redirect URI, as its local listener would, and record where the browser went."""
    landed: list[str] = []

    def answer(route: Route) -> None:
        landed.append(route.request.url)
        route.fulfill(status=200, content_type="text/html", body="<p>You can close this window.</p>")

    page.route(re.compile(r"^http://127\.0\.0\.1:53682/.*"), answer)
    return landed


def sign_in(page: Page, site: Site, user: str) -> None:
    expect(page).to_have_url(re.compile(r"/login\?next=/oauth/consent"))
    page.get_by_label("Token").fill(site.tokens[user])
    page.get_by_role("button", name="Log in").click()


def registered(site: Site, name: str) -> OAuthClient:
    client = OAuthClient(site.url, name=name)
    assert client.register().status_code == 201
    return client


def test_approving_in_the_browser_returns_a_code_that_buys_working_tokens(context: BrowserContext, site: Site) -> None:
    client = registered(site, "Editor <script>alert(1)</script>")
    verifier = secrets.token_urlsafe(48)
    page = context.new_page()
    landed = catch_redirects(page)
    dialogs: list[Any] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog), dialog.dismiss()))
    page.goto(client.authorization_url(verifier, state="from-the-browser"))
    sign_in(page, site, "alice")
    expect(page).to_have_url(re.compile(r"/oauth/consent\?request="))
    expect(page.get_by_role("heading", level=1)).to_have_text("Authorize Editor <script>alert(1)</script>?")
    expect(page.locator(".redirect-uri")).to_have_text(REDIRECT)
    expect(page.locator(".lede strong")).to_have_text("alice")
    page.get_by_role("button", name="Approve").click()
    page.wait_for_url(re.compile(r"^http://127\.0\.0\.1:53682/callback\?"))
    assert dialogs == [], "the client's name is text, never markup"
    back = query_of(landed[-1])
    assert back["state"] == "from-the-browser" and back["code"].startswith("zmac_")
    tokens = client.exchange(back["code"], verifier)
    assert tokens.status_code == 200, tokens.text
    assert mcp_status(site.url, tokens.json()["access_token"]) == 200


def test_denying_in_the_browser_returns_access_denied(context: BrowserContext, site: Site) -> None:
    client = registered(site, "Unwanted client")
    page = context.new_page()
    landed = catch_redirects(page)
    page.goto(client.authorization_url(secrets.token_urlsafe(48), state="no-thanks"))
    sign_in(page, site, "bob")
    page.get_by_role("button", name="Deny").click()
    page.wait_for_url(re.compile(r"^http://127\.0\.0\.1:53682/callback\?"))
    assert query_of(landed[-1]) == {"error": "access_denied", "state": "no-thanks"}


def test_the_clients_page_lists_an_approved_client_and_revokes_it(context: BrowserContext, site: Site) -> None:
    client = registered(site, "Carol's editor")
    verifier = secrets.token_urlsafe(48)
    page = context.new_page()
    landed = catch_redirects(page)
    page.goto(client.authorization_url(verifier))
    sign_in(page, site, "carol")
    page.get_by_role("button", name="Approve").click()
    page.wait_for_url(re.compile(r"^http://127\.0\.0\.1:53682/callback\?"))
    tokens = client.exchange(query_of(landed[-1])["code"], verifier).json()
    assert mcp_status(site.url, tokens["access_token"]) == 200

    page.goto("/clients")
    expect(page.get_by_role("link", name="Clients")).to_have_attribute("aria-current", "page")
    row = page.locator("table.clients tbody tr", has_text="Carol's editor")
    expect(row).to_have_count(1)
    expect(row).to_contain_text(client.client_id)
    row.get_by_role("button", name="Revoke Carol's editor").click()
    expect(page.locator(".flash")).to_have_text("Revoked Carol's editor: its tokens no longer work.")
    expect(page.locator("table.clients tbody tr", has_text="Carol's editor")).to_have_count(0)
    assert mcp_status(site.url, tokens["access_token"]) == 401
    assert client.refresh(tokens["refresh_token"]).json()["error"] == "invalid_grant"


def test_an_expired_or_altered_consent_link_shows_an_error_page(context: BrowserContext, site: Site) -> None:
    page = context.new_page()
    page.goto("/login")
    page.get_by_label("Token").fill(site.tokens["alice"])
    page.get_by_role("button", name="Log in").click()
    page.goto("/oauth/consent?request=not-a-signed-request")
    expect(page.locator("h1")).to_have_text("validation_failed")
    expect(page.locator("main")).to_contain_text("Start again from your MCP client")
    expect(page.get_by_role("button", name="Approve")).to_have_count(0)
