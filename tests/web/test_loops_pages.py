"""The Open loops page and pinning, in process (the rules) and in Chromium against ``zm serve`` (the clicks)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta

import pytest
from playwright.sync_api import Browser, Page, expect
from starlette.testclient import TestClient

from tests.hygiene.helpers import Clock
from tests.web.conftest import DESKTOP, Site, start_site
from tests.web.helpers import Seeder, csrf_of, unique
from zero_memory.app import App
from zero_memory.clock import utcnow
from zero_memory.embedding import Embedder
from zero_memory.memory.lifecycle import get_memory


@pytest.fixture
def seed(app: App) -> Seeder:
    return Seeder(app)


def post(client: TestClient, path: str, **fields: str) -> str:
    csrf = csrf_of(client.get("/loops").text)
    answer = client.post(path, data={"csrf_token": csrf, **fields})
    assert answer.status_code == 303, answer.text
    return answer.headers["location"]


def test_the_page_lists_only_the_callers_open_loops(alice_web: TestClient, seed: Seeder) -> None:
    mine = seed.memory("alice", unique("Draft the on-call rota"), kind="task")
    theirs = seed.memory("bob", unique("Bob's private question"), kind="open-question")
    fact = seed.memory("alice", unique("The rota lives in the wiki"), kind="fact")
    page = alice_web.get("/loops").text
    assert mine in page and theirs not in page and fact not in page
    assert 'aria-current="page">Open loops' in page


def test_close_and_reopen_from_the_page_leave_an_audit_trail(alice_web: TestClient, seed: Seeder) -> None:
    task = seed.memory("alice", unique("Renew the staging certificate"), kind="task")
    assert post(alice_web, f"/loops/{task}/close", note="renewed until May") == "/loops"
    assert task not in alice_web.get("/loops").text
    closed = alice_web.get("/loops?status=closed").text
    assert task in closed and "renewed until May" in closed and "closed by alice" in closed
    assert post(alice_web, f"/loops/{task}/reopen") == "/loops?status=closed"
    assert task in alice_web.get("/loops").text
    actions = [a.action for a in get_memory(seed.app, seed.caller("alice"), task).audit]
    assert actions[:2] == ["restore", "close_loop"]  # newest first


def test_a_fact_cannot_be_closed_as_a_loop(alice_web: TestClient, seed: Seeder) -> None:
    fact = seed.memory("alice", unique("The build takes four minutes"))
    csrf = csrf_of(alice_web.get("/loops").text)
    answer = alice_web.post(f"/loops/{fact}/close", data={"csrf_token": csrf})
    assert answer.status_code == 400 and "not an open loop" in answer.text


def test_pin_and_unpin_from_a_memorys_page(alice_web: TestClient, seed: Seeder) -> None:
    rule = seed.memory("alice", unique("Every endpoint needs a rate limit"), kind="convention")
    assert "Pin as a rule" in alice_web.get(f"/memories/{rule}").text
    post(alice_web, f"/memories/{rule}/pin")
    page = alice_web.get(f"/memories/{rule}").text
    assert "pinned rule" in page and "Unpin" in page
    post(alice_web, f"/memories/{rule}/unpin")
    assert not get_memory(seed.app, seed.caller("alice"), rule).memory.pinned
    theirs = seed.memory("bob", unique("Bob's rule"), kind="convention")
    csrf = csrf_of(alice_web.get("/loops").text)
    assert alice_web.post(f"/memories/{theirs}/pin", data={"csrf_token": csrf}).status_code == 404


# -- in a real browser --------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(browser: Browser, tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Site]:
    clock = Clock(start=utcnow() - timedelta(days=60))
    with start_site(tmp_path_factory.mktemp("loops"), embedder, clock=clock) as running:
        yield running


@pytest.fixture
def page(browser: Browser, site: Site) -> Iterator[Page]:
    context = browser.new_context(base_url=site.url, viewport=DESKTOP)
    context.set_default_timeout(10_000)
    opened = context.new_page()
    opened.goto("/login")
    opened.get_by_label("Token").fill(site.tokens["alice"])
    opened.get_by_role("button", name="Log in").click()
    expect(opened).to_have_url(re.compile(r"/queue$"))
    yield opened
    context.close()


@pytest.mark.slow
def test_a_person_closes_and_reopens_a_sixty_day_old_task_in_chromium(page: Page, site: Site) -> None:
    text = unique("Migrate the cron jobs to the scheduler")
    task = site.seed.memory("alice", text, kind="task")
    page.get_by_role("link", name="Open loops").click()
    card = page.locator(f"article#{task}")
    expect(card).to_contain_text(text)
    expect(card).to_contain_text("open 2 mo")
    card.get_by_label("Note").fill("moved in the spring release")
    card.get_by_role("button", name="Close").click()
    expect(page.locator(".flash")).to_contain_text("Closed")
    expect(page.locator(f"article#{task}")).to_have_count(0)

    page.get_by_role("link", name="closed").click()
    closed = page.locator(f"article#{task}")
    expect(closed).to_contain_text("moved in the spring release")
    closed.locator("summary").click()
    expect(closed.locator(".trail")).to_contain_text("alice · closed: moved in the spring release")
    closed.get_by_role("button", name="Reopen").click()
    expect(page.locator(".flash")).to_contain_text("Reopened")
    page.get_by_role("link", name="open", exact=True).click()
    expect(page.locator(f"article#{task}")).to_contain_text(text)


@pytest.mark.slow
def test_the_trail_of_a_loop_shows_every_close_and_reopen_in_order_in_chromium(page: Page, site: Site) -> None:
    text = unique("Rotate the deploy key")
    task = site.seed.memory("alice", text, kind="task")
    page.get_by_role("link", name="Open loops").click()
    for note in ("rotated on Monday", "rotated again after the leak"):
        card = page.locator(f"article#{task}")
        card.get_by_label("Note").fill(note)
        card.get_by_role("button", name="Close").click()
        expect(page.locator(".flash")).to_contain_text("Closed")
        if note.startswith("rotated on"):
            page.get_by_role("link", name="closed").click()
            page.locator(f"article#{task}").get_by_role("button", name="Reopen").click()
            expect(page.locator(".flash")).to_contain_text("Reopened")
            page.get_by_role("link", name="open", exact=True).click()

    page.get_by_role("link", name="closed").click()
    closed = page.locator(f"article#{task}")
    summary = closed.locator("summary")
    expect(summary).to_have_text("Audit trail (3)")
    summary.click()
    entries = closed.locator(".trail li")
    expect(entries).to_have_count(3)
    expect(entries.nth(0)).to_contain_text("alice · closed: rotated on Monday")
    expect(entries.nth(1)).to_contain_text("alice · reopened")
    expect(entries.nth(2)).to_contain_text("alice · closed: rotated again after the leak")
    for n in range(3):
        expect(entries.nth(n).locator(".muted")).not_to_be_empty()  # when it happened


@pytest.mark.slow
def test_a_person_pins_a_rule_in_chromium(page: Page, site: Site) -> None:
    rule = site.seed.memory("alice", unique("Every migration gets a rollback script"), kind="convention")
    page.goto(f"/memories/{rule}")
    page.get_by_role("button", name="Pin as a rule").click()
    expect(page.locator(".flash")).to_contain_text("Pinned")
    expect(page.locator(".chip.pinned")).to_have_text("pinned rule")
    page.get_by_role("button", name="Unpin").click()
    expect(page.locator(".flash")).to_contain_text("Unpinned")
    expect(page.locator(".chip.pinned")).to_have_count(0)
