"""Deleting one's own account from the dashboard, in Chromium, against a real ``zm serve``.

Dora downloads her export, is refused while the name she types is wrong (and before she
downloaded it), then deletes her account: her memories and token are gone, the memory
she wrote to bob's team stays for bob under a pseudonym, and nobody else's memory moved.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.web.conftest import DESKTOP, Site, start_site
from zero_memory.embedding import Embedder
from zero_memory.memory.recall import recall
from zero_memory.store import SYSTEM, system_tx

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site(browser: Browser, tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Site]:
    with start_site(tmp_path_factory.mktemp("account"), embedder, people=("alice", "bob", "dora")) as running:
        yield running


@pytest.fixture
def context(browser: Browser, site: Site) -> Iterator[BrowserContext]:
    opened = browser.new_context(base_url=site.url, viewport=DESKTOP, accept_downloads=True)
    opened.set_default_timeout(15_000)
    yield opened
    opened.close()


def sign_in(page: Page, site: Site, user: str) -> None:
    page.goto("/login")
    page.get_by_label("Token").fill(site.tokens[user])
    page.get_by_role("button", name="Log in").click()
    expect(page.locator(".who")).to_have_text(user)


def test_a_user_downloads_their_export_then_deletes_their_account(context: BrowserContext, site: Site) -> None:
    seed = site.seed
    team = seed.project("bob", "crew", members=("dora",))
    mine = seed.memory("dora", "Dora's notebook lists the lab's freezer codes")
    shared = seed.memory("dora", "The crew rotates the on-call pager every Monday morning", scope=team)
    bobs = seed.memory("bob", "Bob's laptop runs the nightly backup job")
    page = context.new_page()
    sign_in(page, site, "dora")
    page.locator(".who").click()
    expect(page).to_have_url(re.compile(r"/account$"))
    expect(page.get_by_role("heading", level=1)).to_have_text("Your account")

    # Refused before the export was downloaded, and with a wrong name.
    page.get_by_label(re.compile("Type your name")).fill("dora")
    page.get_by_role("button", name="Delete my account").click()
    expect(page.locator("main")).to_contain_text("validation_failed: export: download your export first")
    page.goto("/account")
    with page.expect_download() as downloading:
        page.get_by_role("link", name="Download your export").click()
    exported = [json.loads(line) for line in downloading.value.path().read_text(encoding="utf-8").splitlines()]
    assert {mine, shared} <= {record["id"] for record in exported}
    assert downloading.value.suggested_filename.startswith("zero-memory-dora-")
    page.goto("/account")
    expect(page.get_by_role("status")).to_contain_text("Downloaded in this session")
    page.get_by_label(re.compile("Type your name")).fill("bob")
    page.get_by_role("button", name="Delete my account").click()
    expect(page.locator("main")).to_contain_text("validation_failed: confirm:")
    with site.app.store.tx() as tx:
        assert tx.get_user("dora") is not None and tx.get_memory(mine, SYSTEM) is not None

    page.goto("/account")
    page.get_by_label(re.compile("Type your name")).fill("dora")
    page.get_by_role("button", name="Delete my account").click()

    expect(page).to_have_url(re.compile(r"/login$"))
    expect(page.locator(".flash")).to_contain_text("Your account and your memories were deleted")
    page.get_by_label("Token").fill(site.tokens["dora"])
    page.get_by_role("button", name="Log in").click()
    expect(page.locator(".error")).to_contain_text("That token is not valid")
    with system_tx(site.app.store, "test") as tx:
        assert tx.get_user("dora") is None
        assert tx.get_memory(mine, SYSTEM) is None
        kept = tx.get_memory(shared, SYSTEM)
        assert kept is not None and kept.owner.startswith("former-")
        assert tx.get_memory(bobs, SYSTEM) is not None
        audit = tx.audit_actions("user.delete")
    assert [(row.actor, row.payload["by"]) for row in audit] == [(kept.owner, "self")]
    hits = recall(site.app, seed.caller("bob"), "who carries the on-call pager", scopes_arg=[team])
    assert shared in [hit.id for hit in hits.hits]
