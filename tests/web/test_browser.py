"""The dashboard in a real browser against a real ``zm serve``: one server for this module.

alice reviews her queue, merges, restores, decides on portability; carol
(whose memories nobody else touches) scans with the fake judge and undoes the
run; bob owns what alice must not see.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Locator, Page, expect

from tests.capture.helpers import statement, with_model
from tests.web.conftest import DESKTOP, PHONE, Site, start_site
from tests.web.helpers import unique
from zero_memory.access.caller import Caller
from zero_memory.capture.ingest import ingest
from zero_memory.capture.models import IngestRequest
from zero_memory.domain.memory import Kind
from zero_memory.embedding import Embedder
from zero_memory.hygiene.cycle import scan_written
from zero_memory.judge.fake import FakeJudge
from zero_memory.memory.models import RememberRequest
from zero_memory.memory.recall import recall
from zero_memory.memory.write import remember

pytestmark = pytest.mark.slow

RUN_TIMEOUT_MS = 20_000


@pytest.fixture(scope="module")
def site(browser: Browser, tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Site]:
    with start_site(tmp_path_factory.mktemp("dashboard"), embedder) as running:
        yield running


def new_context(browser: Browser, site: Site, **options: Any) -> BrowserContext:
    context = browser.new_context(base_url=site.url, viewport=options.pop("viewport", DESKTOP), **options)
    context.set_default_timeout(10_000)
    return context


def log_in(page: Page, site: Site, user: str = "alice") -> Page:
    page.goto("/login")
    page.get_by_label("Token").fill(site.tokens[user])
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(re.compile(r"/queue$"))
    return page


@pytest.fixture
def context(browser: Browser, site: Site) -> Iterator[BrowserContext]:
    opened = new_context(browser, site)
    yield opened
    opened.close()


@pytest.fixture
def page(context: BrowserContext, site: Site) -> Page:
    """alice, logged in with her token, JavaScript on."""
    return log_in(context.new_page(), site)


def card(page: Page, dispute_id: str) -> Locator:
    return page.locator(f"article#{dispute_id}")


def flash(page: Page) -> Locator:
    return page.locator(".flash")


# -- getting in -------------------------------------------------------------------


def test_the_printed_one_time_link_logs_the_local_user_in_once(browser: Browser, site: Site) -> None:
    link = site.login_link()
    assert link.startswith(f"{site.url}/login/")
    first = new_context(browser, site)
    try:
        page = first.new_page()
        page.goto(link)
        expect(page).to_have_url(re.compile(r"/queue$"))
        expect(page.locator(".who")).to_have_text("alice")
        cookie = next(c for c in first.cookies() if c["name"] == "zm_session")
        assert cookie["httpOnly"] and cookie["sameSite"] == "Lax" and not cookie["secure"]
    finally:
        first.close()
    second = new_context(browser, site)
    try:
        page = second.new_page()
        answer = page.goto(link)
        assert answer is not None and answer.status == 401
        expect(page.locator(".error")).to_contain_text("used already or has expired")
    finally:
        second.close()


def test_a_wrong_token_stays_on_the_login_page(context: BrowserContext) -> None:
    page = context.new_page()
    page.goto("/queue")
    expect(page).to_have_url(re.compile(r"/login"))
    page.get_by_label("Token").fill("zm_wrong_token")
    page.get_by_role("button", name="Log in").click()
    expect(page.locator(".error")).to_contain_text("not valid")


# -- the review queue -----------------------------------------------------------------


def test_a_queued_pair_is_shown_side_by_side_with_its_judgement(page: Page, site: Site) -> None:
    dispute, a, b = site.seed.pair(
        "alice",
        unique("The staging database listens on port 5433."),
        unique("Staging Postgres moved to port 6543."),
        confidence=0.83,
        rationale="Both name the staging port; they disagree.",
    )
    page.goto("/queue")
    expect(page.locator("nav .count")).to_have_text(re.compile(r"^\d+$"))
    row = card(page, dispute)
    expect(row.locator(".chip.verdict")).to_have_text("Contradiction")
    expect(row.locator(".confidence")).to_have_text("83% confidence")
    expect(row.locator(".rationale")).to_have_text("Both name the staging port; they disagree.")
    left, right = row.locator(".side").nth(0), row.locator(".side").nth(1)
    expect(left).to_contain_text(a)
    expect(left).to_contain_text("port 5433")
    expect(right).to_contain_text(b)
    for side, agent in ((left, "claude-code"), (right, "cursor")):
        expect(side.locator(".badge")).to_have_text(f"agent · {agent}")
        expect(side.locator(".chip.kind")).to_have_text("fact")
        expect(side.locator(".chip.scope")).to_have_text("user.alice")
        expect(side.locator(".age")).to_have_text(re.compile(r"just now|\d+ min"))
    box_a, box_b = left.bounding_box(), right.bounding_box()
    assert box_a and box_b and box_a["x"] + box_a["width"] <= box_b["x"] and abs(box_a["y"] - box_b["y"]) < 2


@pytest.mark.parametrize(
    ("button", "live_a", "live_b"),
    [
        ("Keep both", True, True),
        ("A wins", True, False),
        ("B wins", False, True),
        ("Forget A", False, True),
        ("Forget B", True, False),
    ],
)
def test_each_action_settles_a_pair(page: Page, site: Site, button: str, live_a: bool, live_b: bool) -> None:
    dispute, a, b = site.seed.pair(
        "alice", unique("Deploys go out from main every Tuesday."), unique("Deploys go out from main every Thursday.")
    )
    page.goto("/queue")
    card(page, dispute).get_by_role("button", name=button, exact=True).click()
    expect(page).to_have_url(re.compile(r"/queue$"))
    expect(flash(page)).to_be_visible()
    expect(card(page, dispute)).to_have_count(0)
    assert (site.seed.get(a).live, site.seed.get(b).live) == (live_a, live_b)
    assert site.seed.dispute(dispute).status.value == "resolved"


def test_merging_two_memories_shows_the_rank_two_result_with_its_history(page: Page, site: Site) -> None:
    dispute, a, b = site.seed.pair(
        "alice",
        unique("CI runs on Ubuntu 22.04."),
        unique("CI moved to Ubuntu 24.04."),
        verdict="b_supersedes_a",
        confidence=0.74,
    )
    page.goto(f"/queue/{dispute}")
    row = card(page, dispute)
    expect(row.locator(".chip.verdict")).to_have_text("B supersedes A")
    row.get_by_text("Merge into one memory…").click()
    box = row.get_by_label("Merged text")
    expect(box).to_have_value(re.compile(r"Ubuntu 22\.04.*\n\n.*Ubuntu 24\.04", re.S))
    merged_text = unique("CI runs on Ubuntu 24.04 (since March; 22.04 is gone).")
    box.fill(merged_text)
    row.get_by_role("button", name="Save merged memory").click()
    expect(page).to_have_url(re.compile(r"/memories/mem_\w+$"))
    expect(flash(page)).to_contain_text("supersedes both")
    expect(page.locator(".memory-full .content")).to_have_text(merged_text)
    expect(page.locator(".memory-full .badge")).to_have_text("human · dashboard")
    expect(page.locator(".facts")).to_contain_text("2 — human")
    history = page.locator("ol.history")
    expect(history).to_contain_text(a)
    expect(history).to_contain_text(b)
    expect(history.locator(".chip.gone")).to_have_count(2)
    merged = site.seed.get(page.url.rsplit("/", 1)[1])
    assert int(merged.rank) == 2 and merged.author_kind.value == "human"


def test_a_challenged_memory_is_upheld_and_another_retired(page: Page, site: Site) -> None:
    upheld, kept = site.seed.challenged("alice", unique("The VPN needs the 2FA app."))
    retired, gone = site.seed.challenged("alice", unique("The VPN needs a hardware key."))
    page.goto("/queue?verdict=challenged")
    expect(card(page, upheld).locator(".rationale")).to_have_text("The port changed last week.")
    card(page, upheld).get_by_role("button", name="Uphold").click()
    expect(flash(page)).to_contain_text("Upheld")
    card(page, retired).get_by_role("button", name="Retire").click()
    expect(flash(page)).to_contain_text("Retired")
    assert site.seed.get(kept).live and not site.seed.get(gone).live


def test_the_queue_filters_by_verdict_and_origin(page: Page, site: Site) -> None:
    duplicate, _, _ = site.seed.pair(
        "alice",
        unique("Redis listens on 6379."),
        unique("Redis is on port 6379."),
        verdict="duplicate",
        confidence=0.88,
    )
    retro, _, _ = site.seed.pair("alice", unique("CI uses Node 18."), unique("CI uses Node 20."), origin="retro")
    page.goto("/queue")
    page.get_by_label("Verdict").select_option("duplicate")
    page.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(r"verdict=duplicate"))
    expect(card(page, duplicate)).to_be_visible()
    expect(card(page, retro)).to_have_count(0)
    page.get_by_label("Verdict").select_option("")
    page.get_by_label("Origin").select_option("retro")
    page.get_by_role("button", name="Filter").click()
    expect(card(page, retro)).to_be_visible()
    expect(card(page, duplicate)).to_have_count(0)


# -- memories ---------------------------------------------------------------------------


def test_search_labels_each_card_by_scope_kind_and_badge(page: Page, site: Site) -> None:
    scope = site.seed.project("bob", "atlas", members=("alice",))
    word = unique("quokka").split()[1].strip("[]")
    site.seed.memory("bob", f"Atlas releases are tagged by the release bot {word}.", scope=scope, kind="convention")
    site.seed.memory("alice", f"Remember to rebase before tagging {word}.", kind="gotcha", client="codex")
    page.goto("/memories")
    page.get_by_label("Search memories").fill(word)
    page.get_by_role("button", name="Search").click()
    cards = page.locator("li.card", has_text=word)
    expect(cards).to_have_count(2)
    shared = cards.filter(has_text="Atlas releases")
    expect(shared.locator(".chip.scope")).to_have_text(scope)
    expect(shared.locator(".chip.kind")).to_have_text("convention")
    expect(shared.locator(".badge")).to_have_text("agent · claude-code")
    expect(cards.filter(has_text="rebase").locator(".badge")).to_have_text("agent · codex")


def test_an_invalidated_memory_is_found_and_restored(page: Page, site: Site) -> None:
    text = unique("The cache TTL is five minutes.")
    gone = site.seed.invalidated("alice", text)
    page.goto("/memories")
    page.get_by_label("Lifecycle").select_option("invalidated")
    page.get_by_label("Search memories").fill("cache TTL")
    page.get_by_role("button", name="Search").click()
    page.locator("li.card", has_text=text).locator("a.card-body").click()
    expect(page).to_have_url(re.compile(f"/memories/{gone}$"))
    expect(page.locator(".memory-full .chip.gone")).to_have_text("invalidated · forgotten")
    page.get_by_role("button", name="Restore").click()
    expect(flash(page)).to_contain_text("Restored")
    expect(page.locator(".memory-full .chip.live")).to_have_text("live")
    expect(page.locator("table.audit")).to_contain_text("restore")
    assert site.seed.get(gone).live


def test_a_stale_core_fact_is_upheld_on_its_page(page: Page, site: Site) -> None:
    text = unique("The office printer queue is print.example.net.")
    then = site.app.clock() - timedelta(days=400)
    written = remember(
        dataclasses.replace(site.app, clock=lambda: then),
        Caller("alice", client="claude-code"),
        RememberRequest(content=text, kind=Kind.FACT, scope="core"),
    )
    page.goto(f"/memories/{written.id}")
    expect(page.locator(".memory-full .chip.stale")).to_contain_text("stale")
    page.get_by_role("button", name="Uphold: still true").click()
    expect(flash(page)).to_contain_text("Upheld")
    expect(page.locator(".memory-full .chip.stale")).to_have_count(0)
    expect(page.get_by_role("button", name="Uphold: still true")).to_have_count(0)
    expect(page.locator("table.audit")).to_contain_text("reaffirm")
    hits = recall(site.app, Caller("alice"), "office printer queue", scopes_arg=["core"], channel=None).hits
    assert [h.stale_days for h in hits if h.id == written.id] == [None]


def test_memory_text_with_a_script_tag_renders_as_text(page: Page, site: Site) -> None:
    evil = unique('<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">')
    dispute, a, _ = site.seed.pair("alice", evil, unique("A harmless neighbour."))
    page.goto(f"/memories/{a}")
    expect(page.locator(".memory-full .content")).to_have_text(evil)
    page.goto(f"/queue/{dispute}")
    expect(card(page, dispute).locator(".side").first.locator(".content")).to_have_text(evil)
    assert page.evaluate("window.__pwned") is None
    assert page.locator(".content script, .content img").count() == 0


def test_another_users_memory_id_answers_404(page: Page, site: Site) -> None:
    theirs = site.seed.memory("bob", unique("Bob's private VPN password hint."))
    answer = page.goto(f"/memories/{theirs}")
    assert answer is not None and answer.status == 404
    expect(page.locator("h1")).to_have_text("not_found")
    expect(page.locator("main")).not_to_contain_text("VPN")


def test_a_form_post_without_the_csrf_token_is_refused(page: Page, site: Site) -> None:
    gone = site.seed.invalidated("alice", unique("A memory an attacker would like restored."))
    refused = page.request.post(f"/memories/{gone}/restore", form={})
    assert refused.status == 403 and "security token" in refused.text()
    forged = page.request.post(f"/memories/{gone}/restore", form={"csrf_token": "forged"})
    assert forged.status == 403
    assert not site.seed.get(gone).live
    page.goto(f"/memories/{gone}")
    token = page.locator("input[name=csrf_token]").first.get_attribute("value")
    assert token
    accepted = page.request.post(f"/memories/{gone}/restore", form={"csrf_token": token}, max_redirects=0)
    assert accepted.status == 303 and site.seed.get(gone).live


# -- portability ---------------------------------------------------------------------------


def test_portability_proposals_are_approved_and_dismissed(page: Page, site: Site) -> None:
    scope = site.seed.project("alice", "toolbox")
    moved = site.seed.memory("alice", unique("ripgrep respects .gitignore unless given --no-ignore."), scope=scope)
    stays = site.seed.memory("alice", unique("This repository pins ripgrep 13 in its Brewfile."), scope=scope)
    approve = site.seed.proposal("alice", moved, confidence=0.91, rationale="True of ripgrep in any repository.")
    dismiss = site.seed.proposal("alice", stays, confidence=0.71, rationale="Perhaps general.")
    page.goto("/portability")
    proposal = page.locator(f"article#{approve}")
    expect(proposal.locator(".confidence")).to_have_text("91% confidence")
    expect(proposal.locator(".rationale")).to_have_text("True of ripgrep in any repository.")
    proposal.get_by_role("button", name="Approve: move to core").click()
    expect(flash(page)).to_contain_text("user.alice.core")
    page.locator(f"article#{dismiss}").get_by_role("button", name="Dismiss").click()
    expect(flash(page)).to_contain_text(f"Dismissed: {stays} stays in {scope}")
    expect(page.locator(f"article#{approve}, article#{dismiss}")).to_have_count(0)
    assert site.seed.get(moved).scope == "user.alice.core" and site.seed.get(stays).scope == scope


# -- runs ---------------------------------------------------------------------------------


def test_a_scan_auto_resolves_with_the_judge_and_its_run_is_undone(browser: Browser, site: Site) -> None:
    older = site.seed.memory("carol", "The staging database listens on port 5433.")
    newer = site.seed.memory("carol", "Staging Postgres is reachable on port 5433, not the default 5432.")
    context = new_context(browser, site)
    try:
        page = log_in(context.new_page(), site, "carol")
        page.get_by_role("button", name="Scan now").click()
        expect(page).to_have_url(re.compile(r"/runs/run_\w+$"))
        expect(page.locator("h1 .chip")).to_have_text("completed", timeout=RUN_TIMEOUT_MS)
        counts = page.locator("dl.counts")
        expect(counts.locator("div", has_text="auto resolved").locator("dd")).to_have_text("1")
        expect(page.locator(".actions-list")).to_contain_text("invalidated")
        assert site.seed.get(newer).live and not site.seed.get(older).live

        page.get_by_role("button", name="Undo this run").click()
        expect(flash(page)).to_have_text("Undone: restored 1 memory, removed 0 links.")
        expect(page.locator(".head-actions")).to_have_count(0)
        assert site.seed.get(older).live and site.seed.get(newer).live

        run_id = page.url.rsplit("/", 1)[1]
        page.goto("/runs")
        row = page.locator("table.runs tbody tr", has_text=run_id)
        expect(row).to_contain_text("auto resolved")
        expect(row.get_by_role("button", name="Undo")).to_be_visible()
    finally:
        context.close()


def test_write_triggered_runs_are_folded_by_day_and_each_is_undone_alone(browser: Browser, site: Site) -> None:
    site.seed.memory("bob", unique("The release train leaves on Tuesdays."))
    written = []
    for day in ("Wednesdays", "Thursdays"):
        memory = site.seed.get(site.seed.memory("bob", unique(f"The release train leaves on {day}.")))
        run_id = scan_written(site.seed.app, memory)
        assert run_id is not None
        written.append(run_id)
    context = new_context(browser, site)
    try:
        page = log_in(context.new_page(), site, "bob")
        page.goto("/runs")
        day = page.locator("details.run-day").first
        expect(day.locator("summary")).to_contain_text("2 runs")
        row = day.locator("tbody tr", has_text=written[0])
        expect(row).to_be_hidden()  # folded until opened
        day.locator("summary").click()
        expect(row).to_be_visible()
        expect(day.locator("tbody tr")).to_have_count(2)
        row.get_by_role("link", name=written[0]).click()
        expect(page).to_have_url(re.compile(rf"/runs/{written[0]}$"))
        expect(page.locator("h1")).to_contain_text("On write")
    finally:
        context.close()


def test_the_rejudge_button_asks_the_judge_again_about_pending_pairs(browser: Browser, site: Site) -> None:
    site.seed.pair("carol", unique("Builds cache to ~/.cache/bazel."), unique("Builds cache to /var/cache/bazel."))
    context = new_context(browser, site)
    try:
        page = log_in(context.new_page(), site, "carol")
        page.get_by_role("button", name="Re-judge pending").click()
        expect(flash(page)).to_have_text("Re-judge started.")
        expect(page.locator("h1 .chip")).to_have_text("completed", timeout=RUN_TIMEOUT_MS)
        expect(page.locator("dl.counts div", has_text="judged").first.locator("dd")).to_have_text(re.compile(r"\d+"))
    finally:
        context.close()


# -- without JavaScript, on a phone ---------------------------------------------------------------


def test_every_step_works_without_javascript(browser: Browser, site: Site) -> None:
    dispute, a, b = site.seed.pair("alice", unique("Logs ship to Loki."), unique("Logs ship to Elasticsearch."))
    merge, _, _ = site.seed.pair("alice", unique("Use ruff for lint."), unique("Use ruff for formatting too."))
    context = new_context(browser, site, java_script_enabled=False)
    try:
        page = log_in(context.new_page(), site)
        page.goto(f"/queue/{dispute}")
        card(page, dispute).get_by_role("button", name="A wins").click()
        expect(flash(page)).to_contain_text(f"Kept {a}; invalidated {b}.")
        page.goto(f"/queue/{merge}")
        card(page, merge).get_by_text("Merge into one memory…").click()
        card(page, merge).get_by_label("Merged text").fill(unique("Use ruff for lint and formatting."))
        card(page, merge).get_by_role("button", name="Save merged memory").click()
        expect(page.locator(".memory-full .badge")).to_have_text("human · dashboard")
        page.goto(f"/memories/{b}")
        page.get_by_role("button", name="Restore").click()
        expect(flash(page)).to_contain_text("Restored")
        page.goto("/insights")
        expect(page.locator("svg.chart")).to_have_count(7)
    finally:
        context.close()


def test_on_a_phone_the_pair_stacks_and_the_navigation_fits(browser: Browser, site: Site) -> None:
    dispute, _, _ = site.seed.pair(
        "alice", unique("Feature flags live in LaunchDarkly."), unique("Feature flags moved to Unleash.")
    )
    context = new_context(browser, site, viewport=PHONE)
    try:
        page = log_in(context.new_page(), site)
        page.goto(f"/queue/{dispute}")
        a, b = (card(page, dispute).locator(".side").nth(i).bounding_box() for i in (0, 1))
        assert a and b and b["y"] >= a["y"] + a["height"]
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    finally:
        context.close()


def test_insights_show_charts_beside_their_numbers(page: Page, site: Site) -> None:
    page.goto("/insights")
    expect(page.locator("svg.chart")).to_have_count(7)
    inflow = page.locator("section", has_text="Queue inflow by verdict")
    expect(inflow.locator("table.numbers")).to_contain_text("contradiction")
    expect(inflow.locator("svg.chart rect title").first).to_be_attached()


def test_a_captured_memory_shows_a_dashed_provisional_badge_and_insights_count_it(page: Page, site: Site) -> None:
    text = unique("Staging deploys only happen from main.")
    app = site.seed.app
    served_judges = app.judge_factory
    with_model(app, FakeJudge([[statement(text, "decision")]]))
    try:
        ingest(
            app,
            Caller("alice", client="claude-code"),
            IngestRequest(
                transcript_chunk=unique("user: where do we deploy from?"), conversation_id="c", project_hint="api"
            ),
        )
        app.wait_idle()
    finally:
        app.judge_factory = served_judges
    page.goto("/memories")
    page.get_by_label("Search memories").fill(text.split("[")[0])
    page.get_by_role("button", name="Search").click()
    badge = page.locator("li.card", has_text=text).locator(".badge")
    expect(badge).to_have_text("provisional · extraction")
    assert badge.evaluate("element => getComputedStyle(element).borderTopStyle") == "dashed"
    page.goto("/insights")
    panel = page.locator("section", has_text="Captured from conversations")
    expect(panel.locator("svg.chart")).to_have_count(1)
    expect(panel.locator("table.numbers")).to_contain_text("created")
    expect(panel.locator("table.numbers")).to_contain_text("extraction calls")
