"""The pages and forms over HTTP, in process: what each shows and what each post changes."""

from __future__ import annotations

import re

import pytest
from starlette.testclient import TestClient

from tests.memory.helpers import write
from tests.web.conftest import log_in
from tests.web.helpers import Seeder, csrf_of, unique
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.domain.memory import InvalidationReason, Rank
from zero_memory.domain.records import DisputeStatus
from zero_memory.hygiene.cycle import scan_written
from zero_memory.hygiene.decide import Action, Outcome
from zero_memory.memory.lifecycle import forget, get_memory
from zero_memory.web.runs import list_runs


@pytest.fixture
def seed(app: App) -> Seeder:
    return Seeder(app)


def post(client: TestClient, path: str, **fields: str) -> tuple[int, str]:
    """Post a form from the queue page's session; (status, where it redirects)."""
    csrf = csrf_of(client.get("/queue").text)
    answer = client.post(path, data={"csrf_token": csrf, **fields})
    return answer.status_code, answer.headers.get("location", answer.text)


def flash_after(client: TestClient, location: str) -> str:
    found = re.search(r'<p class="flash" role="status">(.*?)</p>', client.get(location).text, re.S)
    assert found, "no flash message"
    return found.group(1)


def test_the_queue_shows_a_pair_side_by_side_with_its_judgement(alice_web: TestClient, seed: Seeder) -> None:
    dispute, a, b = seed.pair(
        "alice",
        unique("Staging listens on 5433"),
        unique("Staging listens on 5432"),
        rationale="One of them is out of date.",
        confidence=0.81,
    )
    page = alice_web.get("/queue").text
    card = page[page.index(f'id="{dispute}"') :]
    card = card[: card.index("</article>")]
    assert card.index(a) < card.index(b)
    assert "Contradiction" in card and "81% confidence" in card and "One of them is out of date." in card
    assert "agent · claude-code" in card and "agent · cursor" in card and "user.alice" in card
    assert f'name="winner" value="{a}"' in card and f'name="forget" value="{b}"' in card
    assert '<textarea id="merge-' in card
    assert re.search(r'Queue</span> <span class="count" aria-label="\d+ pending">', page)


@pytest.mark.parametrize(
    ("field", "side", "live_a", "live_b"),
    [
        ("keep_both", None, True, True),
        ("winner", "a", True, False),
        ("winner", "b", False, True),
        ("forget", "a", False, True),
        ("forget", "b", True, False),
    ],
)
def test_each_pair_action_settles_the_row(
    alice_web: TestClient, seed: Seeder, field: str, side: str | None, live_a: bool, live_b: bool
) -> None:
    dispute, a, b = seed.pair("alice", unique("Deploys happen on Tuesday"), unique("Deploys happen on Thursday"))
    value = "1" if side is None else {"a": a, "b": b}[side]
    back = "/queue?verdict=contradiction"
    status, location = post(alice_web, f"/queue/{dispute}/resolve", **{field: value}, next=back)
    assert status == 303 and location == back
    assert flash_after(alice_web, location)
    assert (seed.get(a).live, seed.get(b).live) == (live_a, live_b)
    assert seed.dispute(dispute).status is DisputeStatus.RESOLVED


def test_a_retro_row_shows_its_proposal_and_accepting_it_carries_it_out(alice_web: TestClient, seed: Seeder) -> None:
    old = seed.memory("alice", unique("The build cache lives in /var/cache/build"))
    new = seed.memory("alice", unique("The build cache lives in /var/cache/build on every runner"))
    duplicate = InvalidationReason.DUPLICATE
    held = Outcome(Action.INVALIDATE, 6, loser=old, winner=new, reason=duplicate, verdict="duplicate")
    dispute = seed.pair_of("alice", old, new, verdict="duplicate", confidence=0.97, origin="retro", proposed=held)
    page = alice_web.get("/queue").text
    card = page[page.index(f'id="{dispute}"') :]
    card = card[: card.index("</article>")]
    assert "The retro pass proposes: <strong>B stays</strong>, A is retired (duplicate)." in card
    assert 'name="accept" value="1"' in card
    status, _ = post(alice_web, f"/queue/{dispute}/resolve", accept="1")
    assert status == 303
    assert not seed.get(old).live and seed.get(old).superseded_by == new and seed.get(new).live
    assert seed.dispute(dispute).resolution == {"winner": new}


def test_merging_stores_a_human_rank_two_memory_superseding_both(alice_web: TestClient, seed: Seeder) -> None:
    dispute, a, b = seed.pair(
        "alice", unique("CI runs on Ubuntu 22.04"), unique("CI moved to Ubuntu 24.04"), verdict="b_supersedes_a"
    )
    text = unique("CI runs on Ubuntu 24.04 since March")
    status, location = post(alice_web, f"/queue/{dispute}/resolve", merge=text + "\r\n")
    assert status == 303 and location.startswith("/memories/mem_")
    merged = seed.get(location.removeprefix("/memories/"))
    assert merged.content == text and merged.rank is Rank.HUMAN
    assert (merged.author_kind.value, merged.agent_name) == ("human", "dashboard")
    assert not seed.get(a).live and not seed.get(b).live
    page = alice_web.get(location).text
    history = page[page.index("Version history") : page.index("Audit trail")]
    assert a in history and b in history
    assert "human · dashboard" in page


def test_a_single_subject_dispute_is_upheld_or_retired(alice_web: TestClient, seed: Seeder) -> None:
    upheld, kept = seed.challenged("alice", unique("The VPN needs the 2FA app"))
    retired, gone = seed.challenged("alice", unique("The VPN needs a hardware key"))
    page = alice_web.get("/queue?verdict=challenged").text
    assert "Uphold" in page and "Retire" in page and "The port changed last week." in page
    assert post(alice_web, f"/queue/{upheld}/resolve", keep_both="1")[0] == 303
    assert post(alice_web, f"/queue/{retired}/resolve", retire="1")[0] == 303
    assert seed.get(kept).live and not seed.get(gone).live


def test_settling_a_settled_row_is_a_conflict_and_a_bad_choice_is_invalid(alice_web: TestClient, seed: Seeder) -> None:
    dispute, a, _ = seed.pair("alice", unique("Logs go to Loki"), unique("Logs go to Elasticsearch"))
    assert post(alice_web, f"/queue/{dispute}/resolve", keep_both="1")[0] == 303
    status, body = post(alice_web, f"/queue/{dispute}/resolve", winner=a)
    assert status == 409 and "already_resolved" in body
    assert post(alice_web, f"/queue/{dispute}/resolve")[0] == 400
    assert post(alice_web, f"/queue/{dispute}/resolve", keep_both="1", forget=a)[0] == 400


def test_filters_narrow_the_queue_by_verdict_and_origin(alice_web: TestClient, seed: Seeder) -> None:
    dup, _, _ = seed.pair("alice", unique("Redis is on 6379"), unique("Redis runs on 6379"), verdict="duplicate")
    retro, _, _ = seed.pair("alice", unique("Node 18 in CI"), unique("Node 20 in CI"), origin="retro")
    by_verdict = alice_web.get("/queue?verdict=duplicate").text
    assert dup in by_verdict and retro not in by_verdict
    by_origin = alice_web.get("/queue?origin=retro").text
    assert retro in by_origin and dup not in by_origin


def test_memories_search_every_visible_scope_and_label_each_card(alice_web: TestClient, seed: Seeder) -> None:
    scope = seed.project("bob", "atlas", members=("alice",))
    marker = unique("zebrafish")
    shared = seed.memory("bob", f"Atlas deploys with {marker}", scope=scope, kind="convention")
    own = seed.memory("alice", f"My note on {marker}", kind="gotcha")
    private = seed.memory("bob", f"Bob's own {marker}")
    page = alice_web.get(f"/memories?q={marker.split()[0]}").text
    assert shared in page and own in page and private not in page
    assert scope in page and "convention" in page and "gotcha" in page and "agent · claude-code" in page


def test_an_invalidated_memory_is_listed_by_lifecycle_and_restored(alice_web: TestClient, seed: Seeder) -> None:
    gone = seed.invalidated("alice", unique("The cache TTL is 5 minutes"))
    assert gone not in alice_web.get("/memories").text
    assert gone in alice_web.get("/memories?lifecycle=invalidated").text
    assert gone in alice_web.get("/memories?lifecycle=all&q=cache+TTL").text
    page = alice_web.get(f"/memories/{gone}").text
    assert "Restore" in page and "forgotten" in page
    status, location = post(alice_web, f"/memories/{gone}/restore")
    assert (status, location) == (303, f"/memories/{gone}")
    assert seed.get(gone).live
    assert "Restored" in flash_after(alice_web, location)


def test_a_bad_lifecycle_or_limit_is_a_400_page(alice_web: TestClient) -> None:
    for path in ("/memories?lifecycle=deleted", "/memories?limit=0", "/memories?limit=ten"):
        answer = alice_web.get(path)
        assert answer.status_code == 400 and "validation_failed" in answer.text, path


def test_memory_text_is_escaped_everywhere_it_appears(alice_web: TestClient, seed: Seeder) -> None:
    evil = unique('<script>alert("x")</script><img src=x onerror=alert(1)>')
    dispute, a, _ = seed.pair("alice", evil, unique("A harmless neighbour"))
    for path in ("/queue", f"/queue/{dispute}", f"/memories/{a}", "/memories?lifecycle=all"):
        page = alice_web.get(path).text
        assert "<script>alert" not in page and "<img src=x" not in page, path
        assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page, path


def test_portability_proposals_are_approved_or_dismissed(alice_web: TestClient, seed: Seeder) -> None:
    scope = seed.project("alice", "tools")
    moved = seed.memory("alice", unique("ripgrep respects .gitignore by default"), scope=scope)
    stays = seed.memory("alice", unique("This repo pins ripgrep 13"), scope=scope)
    approve = seed.proposal("alice", moved, rationale="True of ripgrep everywhere.")
    dismiss = seed.proposal("alice", stays)
    page = alice_web.get("/portability").text
    assert "True of ripgrep everywhere." in page and "86% confidence" in page
    assert post(alice_web, f"/portability/{approve}", decision="approve") == (303, "/portability")
    assert post(alice_web, f"/portability/{dismiss}", decision="dismiss") == (303, "/portability")
    assert seed.get(moved).scope == "user.alice.core" and seed.get(stays).scope == scope
    assert post(alice_web, f"/portability/{dismiss}", decision="approve")[0] == 409
    assert post(alice_web, f"/portability/{dismiss}", decision="maybe")[0] == 400


def test_approving_a_proposal_from_a_project_others_read_is_refused_on_the_page(
    alice_web: TestClient, seed: Seeder
) -> None:
    scope = seed.project("alice", "shared-tools", members=("bob",))
    memory = seed.memory("alice", unique("fd ignores hidden files unless -H"), scope=scope)
    proposal = seed.proposal("alice", memory)  # filed before bob joined
    status, text = post(alice_web, f"/portability/{proposal}", decision="approve")
    assert status == 409 and "other members read" in text and "bob" not in text
    assert seed.get(memory).scope == scope
    assert proposal in alice_web.get("/portability").text  # still pending


def test_the_scan_button_starts_a_run_whose_page_shows_its_summary(alice_web: TestClient, app: App) -> None:
    status, location = post(alice_web, "/runs", rejudge="1")
    assert status == 303 and location.startswith("/runs/run_")
    app.wait_idle()
    page = alice_web.get(location).text
    assert "completed" in page and "rejudge skipped" in page
    assert location.removeprefix("/runs/") in alice_web.get("/runs").text


def test_write_triggered_runs_are_folded_by_day_below_the_cycles(alice_web: TestClient, seed: Seeder, app: App) -> None:
    _, cycle_page = post(alice_web, "/runs")
    app.wait_idle()
    cycle_id = cycle_page.removeprefix("/runs/")
    seed.memory("alice", unique("The staging database is purple"))
    written = []
    for value in ("green", "blue", "red"):
        memory = seed.get(seed.memory("alice", unique(f"The staging database is {value}")))
        run_id = scan_written(app, memory)
        assert run_id is not None
        written.append(run_id)
    page = alice_web.get("/runs").text
    cycles, folded = page.split('<section class="write-runs"', 1)
    assert cycle_id in cycles and not any(run_id in cycles for run_id in written)
    (day,) = re.findall(r'<details class="run-day">\s*<summary>(.*?)</summary>', folded, re.S)
    assert "3 runs" in day and re.search(r"queued</span> \d+", day)
    assert all(f'href="/runs/{run_id}"' in folded for run_id in written)
    # Each folded run is still undone on its own.
    assert post(alice_web, f"/runs/{written[-1]}/undo") == (303, f"/runs/{written[-1]}")


def test_a_flood_of_write_triggered_runs_never_hides_a_cycle(alice_web: TestClient, seed: Seeder, app: App) -> None:
    _, cycle_page = post(alice_web, "/runs")
    app.wait_idle()
    cycle_id = cycle_page.removeprefix("/runs/")
    seed.memory("alice", unique("The staging database is purple"))
    written = [
        scan_written(app, seed.get(seed.memory("alice", unique(f"The staging database is {value}"))))
        for value in ("green", "blue", "red")
    ]
    page = list_runs(app, Caller("alice", client="dashboard"), window=2)
    assert [view.run.id for view in page.cycles] == [cycle_id]
    assert [view.run.id for day in page.write_days for view in day.runs] == written[:0:-1]


def test_a_same_session_refinement_is_a_folded_run_the_page_undoes(alice_web: TestClient, app: App) -> None:
    session = Caller("alice", client="test-agent", session_id=unique("conv"))
    marker = unique("")
    older = write(app, session, f"The deploy script lives in scripts/deploy.sh {marker}")
    newer = write(app, session, f"The deploy script lives in scripts/deploy.sh. {marker}")
    assert newer.superseded == [older.id]
    (day,) = list_runs(app, Caller("alice", client="dashboard")).write_days
    (run,) = [view.run for view in day.runs if view.run.kind == "refine"]
    page = alice_web.get(f"/runs/{run.id}").text
    assert f'href="/memories/{older.id}"' in page and "superseded by" in page and "Undo this run" in page
    assert post(alice_web, f"/runs/{run.id}/undo") == (303, f"/runs/{run.id}")
    restored = get_memory(app, session, older.id).memory
    assert restored.status == "live" and restored.restored


def test_another_users_run_is_not_found(web: TestClient, app: App) -> None:
    log_in(web, app, "bob")
    status, location = post(web, "/runs")
    assert status == 303
    app.wait_idle()
    web.post("/logout", data={"csrf_token": csrf_of(web.get("/queue").text)})
    log_in(web, app, "alice")
    assert web.get(location).status_code == 404
    assert post(web, f"{location}/undo")[0] == 404


def test_insights_draw_each_chart_with_its_numbers(alice_web: TestClient, seed: Seeder) -> None:
    seed.pair("alice", unique("Python 3.11 in CI"), unique("Python 3.12 in CI"), verdict="a_supersedes_b")
    page = alice_web.get("/insights").text
    assert page.count('<svg class="chart"') == 7
    inflow = page[page.index("Queue inflow") : page.index("Automatic actions")]
    assert re.search(r'<th scope="row">supersedes</th><td>\d+</td>', inflow)
    assert "<script" not in page.split("</head>")[1]


def test_unknown_pages_render_the_error_page(alice_web: TestClient) -> None:
    answer = alice_web.get("/nowhere")
    assert answer.status_code == 404 and "There is no such page." in answer.text and "Review queue" in answer.text


def test_settled_rows_say_how_they_were_settled(alice_web: TestClient, seed: Seeder, app: App) -> None:
    kept, a, _ = seed.pair("alice", unique("Docs live in Notion"), unique("Docs live in the repo"))
    moot, gone, _ = seed.pair("alice", unique("Backups run at 02:00"), unique("Backups run at 03:00"))
    post(alice_web, f"/queue/{kept}/resolve", winner=a)
    forget(app, Caller("alice"), gone)
    _, run_page = post(alice_web, "/runs")
    app.wait_idle()
    resolved = alice_web.get("/queue?status=resolved").text
    assert f'Resolved: kept <a class="mono" href="/memories/{a}">' in resolved
    dismissed = alice_web.get("/queue?status=dismissed").text
    assert moot in dismissed and "Dismissed: a side was no longer live" in dismissed
    run = alice_web.get(run_page).text
    assert "queue.dismiss" in run and "dismissed stale" in run


def test_a_memory_page_shows_its_newest_audit_rows_and_links_to_older_ones(
    alice_web: TestClient, seed: Seeder, app: App
) -> None:
    memory_id = seed.memory("alice", unique("The release train leaves on Tuesdays"))
    with app.store.tx(write=True) as tx:
        for n in range(60):
            tx.add_audit(
                actor="alice",
                action=f"step-{n:02}",
                owner="alice",
                memory_ids=[memory_id],
                payload={},
                run_id=None,
                at=app.clock(),
            )
    page = alice_web.get(f"/memories/{memory_id}").text
    assert "step-59" in page and "step-10" in page and "step-09" not in page
    assert page.index("step-59") < page.index("step-58")
    (older,) = re.findall(rf'href="(/memories/{memory_id}\?cursor=\d+)">Older entries', page)
    rest = alice_web.get(older).text
    assert "step-09" in rest and "step-00" in rest and "step-10" not in rest and "Older entries" not in rest
