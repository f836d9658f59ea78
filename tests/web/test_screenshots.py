"""Screenshots of the main pages, on a laptop and on a phone, over a month of realistic data.

They land in ``docs/screenshots/`` when ``ZM_UPDATE_SCREENSHOTS=1`` (that is how
the ones docs/dashboard.md shows were made), else in a temporary folder: the
pages are still opened and checked, and the working tree stays clean.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.web.conftest import DESKTOP, PHONE, Site, screenshot_dir, start_site
from tests.web.showcase import BackClock, Script, month
from zero_memory.embedding import Embedder

pytestmark = pytest.mark.slow

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def showcase(
    browser: Browser, tmp_path_factory: pytest.TempPathFactory, embedder: Embedder
) -> Iterator[tuple[Site, dict[str, str]]]:
    clock, script = BackClock(), Script()
    with start_site(
        tmp_path_factory.mktemp("showcase"), embedder, clock=clock, judge_factory=script.judge_factory()
    ) as site:
        yield site, month(site.seed, clock, script)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return screenshot_dir(tmp_path_factory)


def open_page(browser: Browser, site: Site, viewport: dict[str, int], *, logged_in: bool = True) -> Page:
    context = browser.new_context(
        base_url=site.url, viewport=viewport, device_scale_factor=1, color_scheme="light", reduced_motion="reduce"
    )
    context.set_default_timeout(10_000)
    page = context.new_page()
    if logged_in:
        page.goto("/login")
        page.get_by_label("Token").fill(site.tokens["alice"])
        page.get_by_role("button", name="Log in").click()
        expect(page).to_have_url(re.compile(r"/queue$"))
    return page


def shoot(page: Page, folder: Path, name: str, *, full_page: bool = True) -> None:
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page, animations="disabled")
    assert path.read_bytes().startswith(PNG)


def test_desktop_screenshots(browser: Browser, showcase: tuple[Site, dict[str, str]], folder: Path) -> None:
    site, ids = showcase
    page = open_page(browser, site, DESKTOP, logged_in=False)
    page.goto("/login")
    shoot(page, folder, "login", full_page=False)
    page.close()

    page = open_page(browser, site, DESKTOP)
    expect(page.locator("article.dispute")).to_have_count(3)
    expect(page.locator("nav .count")).to_have_text("3")
    shoot(page, folder, "queue")

    page.goto("/memories?q=payments+API")
    expect(page.locator("li.card").first).to_be_visible()
    shoot(page, folder, "memories")

    page.goto(f"/memories/{ids['merged']}")
    expect(page.locator("ol.history li")).to_have_count(3)
    shoot(page, folder, "memory")

    page.goto("/portability")
    expect(page.locator("article.proposal")).to_have_count(2)
    shoot(page, folder, "portability")

    page.goto("/runs")
    expect(page.locator("table.runs tbody tr")).to_have_count(4)
    shoot(page, folder, "runs")

    page.goto(f"/runs/{ids['run']}")
    expect(page.locator(".actions-list")).to_contain_text("invalidated")
    shoot(page, folder, "run")

    page.goto("/insights")
    expect(page.locator("svg.chart")).to_have_count(7)
    expect(page.locator("section", has_text="Self-healing").locator("table.numbers")).to_contain_text("rejudge")
    shoot(page, folder, "insights")
    page.close()


def test_phone_screenshots(browser: Browser, showcase: tuple[Site, dict[str, str]], folder: Path) -> None:
    site, ids = showcase
    page = open_page(browser, site, PHONE)
    for name, path in (
        ("queue-phone", f"/queue/{ids['pending']}"),
        ("memory-phone", f"/memories/{ids['merged']}"),
        ("insights-phone", "/insights"),
    ):
        page.goto(path)
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], name
        shoot(page, folder, name, full_page=False)
    page.close()
