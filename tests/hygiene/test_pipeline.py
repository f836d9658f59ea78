"""The pair scan end to end: real SQLite, the real embedding model, a scripted judge.

Every outcome of docs/spec/hygiene.md §3 through a full cycle and through the write
trigger, with its memory rows, links, audit rows and queue rows; then the
guarantees around it: settled pairs stay settled, failures fail closed, the
cache, offer mode, dry runs, undo, and the run summary.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

import pytest

from tests.hygiene.helpers import asked, audit, audit_actions, dispute_of, disputes, link_types, links, pair, row
from tests.hygiene.pipeline import BLUE, GREEN, TOPICS, cycle, factory, human, judge_by_pair, two
from tests.memory.helpers import write
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.domain.memory import InvalidationReason, Status
from zero_memory.domain.records import DisputeStatus, pair_key
from zero_memory.hygiene.cycle import on_write, scan_written
from zero_memory.hygiene.undo import undo_run
from zero_memory.judge.base import FailureKind
from zero_memory.judge.fake import FakeAnswer, FakeJudge
from zero_memory.judge.questions.pair import PairRequest

MakeApp = Callable[..., App]

# (kinds, provisional, the judge's answer, what should happen)
# what: ("nothing",) | ("link",) | ("invalidate", loser "old"/"new", reason) | ("queue", verdict, direction)
NOTHING, LINK = ("nothing",), ("link",)
AGENTS, PROVISIONAL_FIRST, PROVISIONAL = (False, False), (True, False), (True, True)
FACTS = ("fact", "fact")
GOTCHA_NEW, GOTCHA_OLD = ("fact", "gotcha"), ("gotcha", "fact")


def invalidated(loser: str, reason: str) -> tuple[str, ...]:
    return ("invalidate", loser, reason)


def queued(verdict: str, direction: str | None = None) -> tuple[str | None, ...]:
    return ("queue", verdict, direction)


OUTCOMES: dict[str, tuple[tuple[str, str], tuple[bool, bool], FakeAnswer, tuple[Any, ...]]] = {
    "unrelated": (FACTS, AGENTS, ("unrelated", 0.99), NOTHING),
    "complementary-linked": (FACTS, AGENTS, ("complementary", 0.9), LINK),
    "complementary-unlinked": (FACTS, AGENTS, ("complementary", 0.89), NOTHING),
    "complementary-never-queued": (("fact", "decision"), PROVISIONAL_FIRST, ("complementary", 0.5), NOTHING),
    "both-provisional-collapse": (FACTS, PROVISIONAL, ("contradiction", 0.3), invalidated("old", "superseded")),
    "both-provisional-duplicate": (FACTS, PROVISIONAL, ("duplicate", 0.2), invalidated("old", "duplicate")),
    "provenance-override": (GOTCHA_NEW, PROVISIONAL_FIRST, ("a_supersedes_b", 0.5), invalidated("old", "superseded")),
    "contradiction": (FACTS, AGENTS, ("contradiction", 0.99), queued("contradiction")),
    "duplicate": (FACTS, AGENTS, ("duplicate", 0.9), invalidated("old", "duplicate")),
    "duplicate-protected-loser": (("decision", "decision"), AGENTS, ("duplicate", 0.99), queued("duplicate")),
    "duplicate-below-gate": (FACTS, AGENTS, ("duplicate", 0.89), queued("duplicate")),
    "b-supersedes-a": (FACTS, AGENTS, ("b_supersedes_a", 0.95), invalidated("old", "superseded")),
    "a-supersedes-b": (FACTS, AGENTS, ("a_supersedes_b", 0.97), invalidated("new", "superseded")),
    "supersede-protected": (GOTCHA_OLD, AGENTS, ("b_supersedes_a", 0.99), queued("supersedes", "b_supersedes_a")),
    "supersede-below-gate": (FACTS, AGENTS, ("b_supersedes_a", 0.94), queued("supersedes", "b_supersedes_a")),
}


@pytest.mark.parametrize("trigger", ["cycle", "write"])
@pytest.mark.parametrize("case", list(OUTCOMES))
def test_every_routing_outcome_lands_end_to_end(make_app: MakeApp, alice: Caller, case: str, trigger: str) -> None:
    kinds, provisional, answer, expected = OUTCOMES[case]
    judge = judge_by_pair({(GREEN, BLUE): answer})
    app = make_app(judge_factory=factory(judge))
    old, new = two(app, alice, kinds=kinds, provisional=provisional)
    if trigger == "cycle":
        run, summary = cycle(app)
        run_id: str | None = run.id
        assert summary["judged"] == 1
    else:
        # A write-triggered scan is a run of its own, and its actions carry the run's id too.
        run_id = scan_written(app, row(app, new))
        assert run_id is not None
    assert asked(judge) == [pair(GREEN, BLUE)]
    assert isinstance(answer, tuple)
    verdict, confidence = answer
    model = "fake-fast" if any(provisional) else "fake-strong"
    actor = "hygiene.scan" if trigger == "cycle" else "hygiene.write"
    with app.store.tx() as tx:
        cached = tx.get_judgement(pair_key(old, new), model)
    assert cached is not None and (cached.verdict, cached.confidence) == (verdict, confidence)

    ids = {"old": old, "new": new}
    action = expected[0]
    if action in ("nothing", "link"):
        assert row(app, old).live and row(app, new).live
        assert disputes(app, status=None) == []
        assert link_types(app, old, new) == ({"relates_to"} if action == "link" else set())
        linked = [e for e in audit(app, old) if e.action == "hygiene.link"]
        if action == "link":
            (entry,) = linked
            assert entry.actor == actor and entry.run_id == run_id
            assert entry.payload["verdict"] == "complementary" and entry.payload["confidence"] == confidence
            assert entry.payload["model"] == model and entry.payload["rationale"] == "fake judge"
        else:
            assert linked == []
    elif action == "invalidate":
        loser, winner = ids[expected[1]], ids["new" if expected[1] == "old" else "old"]
        gone = row(app, loser)
        assert gone.status is Status.INVALIDATED
        assert gone.invalidated_reason is InvalidationReason(expected[2])
        assert gone.superseded_by == winner
        assert row(app, winner).live
        assert any(lk.type == "supersedes" and (lk.src, lk.dst) == (winner, loser) for lk in links(app, loser))
        assert disputes(app, status=None) == []
        (entry,) = [e for e in audit(app, loser) if e.action == "hygiene.auto_resolve"]
        assert entry.actor == actor and entry.run_id == run_id and entry.memory_ids == [winner, loser]
        assert {k: entry.payload[k] for k in ("verdict", "confidence", "rationale", "model", "reason")} == {
            "verdict": verdict,
            "confidence": confidence,
            "rationale": "fake judge",
            "model": model,
            "reason": expected[2],
        }
        if trigger == "cycle":
            assert summary["auto_resolved"] == 1
    else:
        (queued,) = disputes(app, status=DisputeStatus.PENDING)
        assert (queued.verdict, queued.direction) == (expected[1], expected[2])
        assert (queued.memory_a, queued.memory_b) == (old, new)
        assert (queued.confidence, queued.rationale, queued.model) == (confidence, "fake judge", model)
        assert queued.origin == ("scan" if trigger == "cycle" else "write") and queued.run_id == run_id
        assert row(app, old).live and row(app, new).live
        assert ("contradicts" in link_types(app, old, new)) == (verdict == "contradiction")
        (entry,) = [e for e in audit(app, old) if e.action == "queue.raise"]
        assert entry.payload["dispute_id"] == queued.id and entry.payload["verdict"] == verdict
        if trigger == "cycle":
            assert summary["queued"] == 1


def test_a_duplicate_s_winner_is_the_higher_rank_even_when_older(make_app: MakeApp, alice: Caller) -> None:
    judge = judge_by_pair({(GREEN, BLUE): ("duplicate", 0.95)})
    app = make_app(judge_factory=factory(judge))
    by_a_person = human(app, GREEN)
    by_an_agent = write(app, alice, BLUE).id
    cycle(app)
    assert row(app, by_a_person).live
    assert row(app, by_an_agent).superseded_by == by_a_person


def test_the_judge_sees_kind_and_verbatim_content_but_never_a_scope(make_app: MakeApp, alice: Caller) -> None:
    judge = judge_by_pair()
    app = make_app(judge_factory=factory(judge))
    two(app, alice, kinds=("gotcha", "fact"))
    cycle(app)
    (request,) = judge.requests
    assert isinstance(request, PairRequest)
    assert (request.a.kind, request.a.content) == ("gotcha", GREEN)
    assert (request.b.kind, request.b.content) == ("fact", BLUE)
    assert set(asdict(request.a)) == {"kind", "age_days", "content"}


# -- settled pairs, failures, the cache, cross-project ------------------------------------------


@pytest.mark.parametrize("status", [DisputeStatus.RESOLVED, DisputeStatus.DISMISSED])
def test_a_human_keep_both_is_never_judged_again(make_app: MakeApp, alice: Caller, status: DisputeStatus) -> None:
    judge = judge_by_pair({(GREEN, BLUE): ("contradiction", 0.99)})
    app = make_app(judge_factory=factory(judge))
    old, new = two(app, alice)
    cycle(app)
    queued = dispute_of(app, old, new)
    assert queued is not None
    with app.store.tx(write=True) as tx:
        assert tx.settle_dispute(queued.id, status, {"keep_both": True}, "alice", app.clock())
    # A new judge model has no cached judgement: only the settled row keeps the pair away from it.
    later = judge_by_pair({(GREEN, BLUE): ("b_supersedes_a", 1.0)}, model="judge-v2")
    app.judge_factory = factory(later)
    _, summary = cycle(app)
    assert asked(later) == []
    assert summary["skipped_settled"] == 1 and summary["judged"] == 0
    assert row(app, old).live and row(app, new).live


@pytest.mark.parametrize("failure", [FailureKind.MALFORMED, FailureKind.TIMEOUT, FailureKind.INVALID_VERDICT])
def test_a_failed_judgement_changes_nothing_caches_nothing_and_is_retried(
    make_app: MakeApp, alice: Caller, failure: FailureKind
) -> None:
    judge = judge_by_pair({(GREEN, BLUE): [failure, ("b_supersedes_a", 0.99)]})
    app = make_app(judge_factory=factory(judge))
    old, new = two(app, alice)
    _, summary = cycle(app)
    assert summary["failed_judgements"] == 1 and summary["judged"] == 0
    assert row(app, old).live and row(app, new).live
    assert disputes(app) == [] and links(app, old) == []
    with app.store.tx() as tx:
        assert tx.get_judgement(pair_key(old, new), "fake-strong") is None
    assert not [e for e in audit(app, old) if e.action.startswith(("hygiene.", "queue."))]

    _, summary = cycle(app)
    assert asked(judge) == [pair(GREEN, BLUE)] * 2
    assert summary["judged"] == 1 and summary["auto_resolved"] == 1
    assert row(app, old).superseded_by == new


def test_a_cross_project_pair_costs_no_judge_call(make_app: MakeApp, alice: Caller) -> None:
    judge = judge_by_pair({(GREEN, BLUE): ("duplicate", 1.0)})
    app = make_app(judge_factory=factory(judge))
    web = write(app, alice, GREEN, project_hint="/work/web").id
    api = write(app, alice, BLUE, project_hint="/work/api").id
    assert (row(app, web).scope, row(app, api).scope) == ("proj.alice.web", "proj.alice.api")
    _, summary = cycle(app)
    assert asked(judge) == []
    assert summary["pairs_considered"] == 1 and summary["skipped_cross_project"] == 1
    assert row(app, web).live and row(app, api).live and disputes(app) == []


def test_an_import_from_a_project_s_directory_is_judged_with_that_project_s_memories(
    make_app: MakeApp, alice: Caller
) -> None:
    judge = judge_by_pair({(GREEN, BLUE): ("contradiction", 1.0)})
    app = make_app(judge_factory=factory(judge))
    in_project = write(app, alice, GREEN, project_hint="/work/web").id
    imported = write(app, alice, BLUE, source={"imported_from": "/work/web/docs"}).id
    other = write(app, alice, "The staging database is red", source={"imported_from": "/work/api"}).id
    _, summary = cycle(app)
    assert pair(GREEN, BLUE) in asked(judge)
    assert dispute_of(app, in_project, imported) is not None
    assert dispute_of(app, in_project, other) is None and dispute_of(app, imported, other) is None
    assert summary["skipped_cross_project"] == 2


def test_a_stable_sweep_spends_nothing_on_the_second_run(make_app: MakeApp, alice: Caller) -> None:
    judge = judge_by_pair({(GREEN, BLUE): ("complementary", 0.5)})
    app = make_app(judge_factory=factory(judge))
    two(app, alice)
    two(app, alice, TOPICS[1])
    _, first = cycle(app)
    assert first["judged"] == 2
    _, second = cycle(app)
    assert len(judge.requests) == 2
    assert second["pairs_considered"] == 2 and second["skipped_cached"] == 2 and second["judged"] == 0


def test_the_fast_and_strong_models_are_cached_apart(make_app: MakeApp, alice: Caller) -> None:
    judge = judge_by_pair()
    app = make_app(judge_factory=factory(judge))
    old, new = two(app, alice, provisional=(True, True))
    cycle(app)
    with app.store.tx() as tx:
        assert tx.get_judgement(pair_key(old, new), "fake-fast") is not None
        assert tx.get_judgement(pair_key(old, new), "fake-strong") is None


def test_a_side_invalidated_by_a_declared_supersede_is_not_judged(make_app: MakeApp, alice: Caller) -> None:
    judge = judge_by_pair()
    app = make_app(judge_factory=factory(judge))
    old = write(app, alice, GREEN).id
    write(app, alice, BLUE, links=[{"type": "supersedes", "dst": old}])
    _, summary = cycle(app)
    assert asked(judge) == [] and summary["judged"] == 0


def test_a_memory_invalidated_earlier_in_a_run_is_not_judged_again_in_that_run(
    make_app: MakeApp, alice: Caller
) -> None:
    red = "The staging database is red"
    judge = judge_by_pair({(GREEN, BLUE): ("b_supersedes_a", 0.99), (GREEN, red): ("b_supersedes_a", 0.99)})
    app = make_app(judge_factory=factory(judge))
    green = write(app, alice, GREEN).id
    write(app, alice, BLUE)
    write(app, alice, red)
    cycle(app)
    assert row(app, green).superseded_by is not None
    # whichever of green's pairs came first retired it; the other must not reach the judge
    assert [p for p in asked(judge) if GREEN in p] in ([pair(GREEN, BLUE)], [pair(GREEN, red)])


# -- offer mode, dry runs ------------------------------------------------------------------


def test_offer_mode_parks_pairs_unjudged_and_never_acts(make_app: MakeApp, alice: Caller) -> None:
    app = make_app()  # ZM_JUDGE_PROVIDER unset: no judge at all
    old, new = two(app, alice, provisional=(True, True))
    _, summary = cycle(app)
    parked = dispute_of(app, old, new)
    assert parked is not None and parked.pending
    assert (parked.verdict, parked.confidence, parked.rationale, parked.model) == ("unjudged", None, None, None)
    assert row(app, old).live and row(app, new).live
    assert summary["queued"] == 1 and summary["judged"] == 0 and summary["auto_resolved"] == 0
    with app.store.tx() as tx:
        assert tx.ledger(owner="alice") == []
    _, again = cycle(app)
    assert again["skipped_settled"] == 1 and again["queued"] == 0


def test_a_dry_run_changes_nothing_but_reports_what_it_would_do(make_app: MakeApp, alice: Caller) -> None:
    judge = judge_by_pair(
        {
            TOPICS[0]: ("duplicate", 0.95),
            TOPICS[1]: ("contradiction", 0.95),
            TOPICS[2]: ("complementary", 0.95),
        }
    )
    app = make_app(judge_factory=factory(judge))
    written = [two(app, alice, texts) for texts in TOPICS[:3]]
    run, summary = cycle(app, dry_run=True)
    assert run.dry_run
    assert (summary["judged"], summary["auto_resolved"], summary["queued"], summary["linked_complementary"]) == (
        3,
        1,
        1,
        1,
    )
    for old, new in written:
        assert row(app, old).live and row(app, new).live
        assert links(app, old) == [] and links(app, new) == []
        with app.store.tx() as tx:
            assert tx.get_judgement(pair_key(old, new), "fake-strong") is None
    assert disputes(app) == []
    assert audit_actions(app, "hygiene.auto_resolve") == [] and audit_actions(app, "queue.raise") == []


# -- undo ----------------------------------------------------------------------------------


def test_undo_restores_a_run_exactly_and_the_next_sweep_leaves_the_pair_alone(make_app: MakeApp, alice: Caller) -> None:
    judge = judge_by_pair(
        {
            TOPICS[0]: ("duplicate", 0.95),
            TOPICS[1]: ("a_supersedes_b", 0.99),
            TOPICS[2]: ("complementary", 0.95),
            TOPICS[3]: ("contradiction", 0.95),
        }
    )
    app = make_app(judge_factory=factory(judge))
    (g_old, g_new), (p_old, p_new), (d_old, d_new), (r_old, r_new) = [two(app, alice, t) for t in TOPICS[:4]]
    run, summary = cycle(app)
    assert summary["auto_resolved"] == 2 and summary["linked_complementary"] == 1 and summary["queued"] == 1
    assert not row(app, g_old).live and not row(app, p_new).live

    report = undo_run(app, run.id, actor="alice", owner="alice")
    assert sorted(report.restored) == sorted([g_old, p_new]) and report.unlinked == 1
    for restored in (g_old, p_new):
        back = row(app, restored)
        assert back.live and back.superseded_by is None and back.invalidated_reason is None
        assert [lk for lk in links(app, restored) if lk.type == "supersedes"] == []
    assert link_types(app, d_old, d_new) == set()
    # the question the run raised stays for a person
    assert dispute_of(app, r_old, r_new) is not None
    assert "contradicts" in link_types(app, r_old, r_new)
    (undone,) = audit_actions(app, "run.undo")
    assert undone.run_id == run.id and sorted(undone.memory_ids) == sorted([g_old, p_new])

    _, after = cycle(app)
    assert len(judge.requests) == 4
    assert after["auto_resolved"] == 0 and after["judged"] == 0
    assert all(row(app, m).live for m in (g_old, g_new, p_old, p_new, d_old, d_new))


def test_undo_leaves_a_memory_someone_restored_and_retired_again_alone(make_app: MakeApp, alice: Caller) -> None:
    from zero_memory.memory.lifecycle import forget, restore_memory

    judge = judge_by_pair({(GREEN, BLUE): ("duplicate", 0.95)})
    app = make_app(judge_factory=factory(judge))
    old, _ = two(app, alice)
    run, _ = cycle(app)
    restore_memory(app, alice, old)
    forget(app, alice, old)
    report = undo_run(app, run.id, actor="alice", owner="alice")
    assert report.restored == [] and report.already_live == [old]
    assert row(app, old).invalidated_reason is InvalidationReason.FORGOTTEN


# -- the write trigger ---------------------------------------------------------------------


def test_the_write_trigger_is_installed_by_zm_hygiene_on_write(make_app: MakeApp, alice: Caller) -> None:
    judge = judge_by_pair({(GREEN, BLUE): ("contradiction", 0.99)})
    app = make_app({"ZM_HYGIENE_ON_WRITE": "1"}, judge_factory=factory(judge))
    assert app.settings.hygiene_on_write
    old, new = two(app, alice)
    app.wait_idle()
    assert asked(judge) == [pair(GREEN, BLUE)]
    assert dispute_of(app, old, new) is not None


def test_the_write_trigger_does_not_delay_the_write(make_app: MakeApp, alice: Caller) -> None:
    entered, release = threading.Event(), threading.Event()

    def slow(request: Any) -> FakeAnswer:
        entered.set()
        assert release.wait(30), "the test never released the judge"
        return ("contradiction", 0.99)

    judge = FakeJudge(slow)
    app = make_app(judge_factory=factory(judge))
    app.after_write.append(on_write(app))
    old = write(app, alice, GREEN).id
    new = write(app, alice, BLUE)
    # the write has answered while the judge is still thinking about it
    assert new.status == "created"
    assert entered.wait(30)
    assert dispute_of(app, old, new.id) is None
    release.set()
    app.wait_idle()
    queued = dispute_of(app, old, new.id)
    assert queued is not None and queued.origin == "write" and queued.run_id is not None
    with app.store.tx() as tx:
        run = tx.get_run(queued.run_id)
    assert run is not None and (run.kind, run.status.value, run.owner) == ("on_write", "completed", "alice")


def test_the_write_trigger_only_scans_the_new_memory_s_pairs(make_app: MakeApp, alice: Caller) -> None:
    judge = judge_by_pair()
    app = make_app(judge_factory=factory(judge))
    two(app, alice, TOPICS[1])
    _, new = two(app, alice)
    scan_written(app, row(app, new))
    assert asked(judge) == [pair(GREEN, BLUE)]


# -- the run summary -----------------------------------------------------------------------

COUNTS = [
    "subjects",
    "pairs_considered",
    "skipped_settled",
    "skipped_cross_project",
    "skipped_cached",
    "judged",
    "auto_resolved",
    "queued",
    "linked_complementary",
    "dismissed_stale",
    "dismissed_rejudge",
    "rescanned",
    "portability_proposed",
    "failed_judgements",
]


def test_the_run_summary_counts_each_kind_of_pair(make_app: MakeApp, alice: Caller) -> None:
    judge = judge_by_pair(
        {
            TOPICS[0]: ("duplicate", 0.95),  # auto-resolved
            TOPICS[1]: ("contradiction", 0.95),  # queued
            TOPICS[2]: ("complementary", 0.95),  # linked
            TOPICS[3]: ("unrelated", 0.95),  # judged, nothing
            TOPICS[4]: [FailureKind.TIMEOUT, ("unrelated", 0.95)],  # failed, then judged
        }
    )
    app = make_app(judge_factory=factory(judge))
    for texts in TOPICS[:5]:
        two(app, alice, texts)
    write(app, alice, TOPICS[5][0], project_hint="web")
    write(app, alice, TOPICS[5][1], project_hint="api")  # cross-project
    _, first = cycle(app)
    expected = dict.fromkeys(COUNTS, 0)
    assert {k: first[k] for k in expected} == {
        **expected,
        "subjects": 12,
        "pairs_considered": 6,
        "skipped_cross_project": 1,
        "judged": 4,
        "auto_resolved": 1,
        "queued": 1,
        "linked_complementary": 1,
        "failed_judgements": 1,
    }
    _, second = cycle(app)
    assert {k: second[k] for k in expected} == {
        **expected,
        "subjects": 11,  # the duplicate's loser is gone
        "pairs_considered": 5,
        "skipped_settled": 1,  # the contradiction's row
        "skipped_cached": 2,  # the complementary and the unrelated pair
        "skipped_cross_project": 1,
        "judged": 1,  # the pair that failed last time
    }
    with app.store.tx() as tx:
        stored = tx.list_runs(owner="alice")
    assert {r.summary["judged"] for r in stored} == {4, 1}


def test_a_memory_with_a_pending_row_is_never_retired_automatically(make_app: MakeApp, alice: Caller) -> None:
    red = "The staging database is red"
    judge = judge_by_pair({(GREEN, BLUE): ("contradiction", 0.99), (GREEN, red): ("b_supersedes_a", 0.99)})
    app = make_app(judge_factory=factory(judge))
    green, blue = two(app, alice)
    cycle(app)
    assert dispute_of(app, green, blue) is not None
    newest = write(app, alice, red).id
    _, summary = cycle(app)
    assert row(app, green).live
    held = dispute_of(app, green, newest)
    assert held is not None and (held.verdict, held.direction) == ("supersedes", "b_supersedes_a")
    assert summary["auto_resolved"] == 0 and summary["queued"] == 1


# -- runs ----------------------------------------------------------------------------------


def test_a_routine_sweep_takes_recent_subjects_and_pairs_them_with_old_neighbours(
    make_app: MakeApp, alice: Caller
) -> None:
    from tests.hygiene.helpers import Clock

    clock = Clock()
    judge = judge_by_pair({(GREEN, BLUE): ("b_supersedes_a", 0.99)})
    app = make_app(clock=clock, judge_factory=factory(judge))
    old = write(app, alice, GREEN).id
    two(app, alice, TOPICS[1])
    clock.advance(days=30)
    new = write(app, alice, BLUE).id
    _, summary = cycle(app)
    assert summary["subjects"] == 1 and asked(judge) == [pair(GREEN, BLUE)]
    assert row(app, old).superseded_by == new


def test_only_one_cycle_per_owner_runs_at_a_time(make_app: MakeApp, alice: Caller) -> None:
    from zero_memory.hygiene.cycle import owner_lock

    judge = judge_by_pair()
    app = make_app(judge_factory=factory(judge))
    two(app, alice)
    with app.store.advisory_lock(owner_lock("alice")) as taken:
        assert taken
        _, summary = cycle(app)
    assert judge.requests == [] and summary["subjects"] == 0
    assert "another cycle of this owner was running; nothing done" in summary["notes"]
    _, summary = cycle(app)
    assert summary["judged"] == 1


def test_a_cycle_started_in_the_background_completes_with_its_summary(make_app: MakeApp, alice: Caller) -> None:
    from zero_memory.domain.records import RunStatus
    from zero_memory.hygiene.cycle import start_cycle

    judge = judge_by_pair({(GREEN, BLUE): ("contradiction", 0.99)})
    app = make_app(judge_factory=factory(judge))
    two(app, alice)
    run, summary = start_cycle(app, "alice", started_by="test")
    assert summary is None
    app.wait_idle()
    with app.store.tx() as tx:
        finished = tx.get_run(run.id)
    assert finished is not None and finished.status is RunStatus.COMPLETED
    assert finished.summary["queued"] == 1
    assert [e.action for e in audit_actions(app, "run.stop") if e.run_id == run.id] == ["run.stop"]


def test_a_judge_that_raises_fails_the_run_and_changes_nothing(make_app: MakeApp, alice: Caller) -> None:
    from zero_memory.domain.records import RunStatus

    judge = FakeJudge()  # no answers: asking it raises
    app = make_app(judge_factory=factory(judge))
    old, new = two(app, alice)
    run, summary = cycle(app)
    with app.store.tx() as tx:
        stored = tx.get_run(run.id)
    assert stored is not None and stored.status is RunStatus.FAILED
    assert "the run failed; see the server log" in summary["notes"]
    assert row(app, old).live and row(app, new).live and disputes(app) == []


def test_two_owners_memories_never_pair(make_app: MakeApp, alice: Caller, bob: Caller) -> None:
    judge = judge_by_pair()
    app = make_app(judge_factory=factory(judge))
    write(app, alice, GREEN)
    write(app, bob, BLUE)
    _, for_alice = cycle(app, "alice")
    _, for_bob = cycle(app, "bob")
    assert judge.requests == []
    assert (for_alice["subjects"], for_alice["pairs_considered"]) == (1, 0)
    assert (for_bob["subjects"], for_bob["pairs_considered"]) == (1, 0)


def test_every_judgement_is_asked_for_the_owner_under_review_within_the_run(
    make_app: MakeApp, alice: Caller, bob: Caller
) -> None:
    judge = judge_by_pair()
    calls: list[tuple[str, str | None]] = []

    def judges(owner: str, run_id: str | None) -> FakeJudge:
        calls.append((owner, run_id))
        return judge

    app = make_app(judge_factory=judges)
    two(app, bob)
    run, _ = cycle(app, "bob")
    assert calls and set(calls) == {("bob", run.id)}
    calls.clear()
    _, new = two(app, bob, TOPICS[1])
    written = scan_written(app, row(app, new))
    assert written is not None and set(calls) == {("bob", written)}
