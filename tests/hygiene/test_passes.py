"""The other passes of a full cycle: stale sweep, re-judge, re-examination, portability (suspects: test_suspects)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.hygiene.helpers import Clock, audit, audit_actions, dispute_of, disputes, pair, row
from tests.hygiene.pipeline import BLUE, GREEN, TOPICS, cycle, factory, judge_by_pair, two
from tests.memory.helpers import supersede, write
from zero_memory import errors
from zero_memory.access import projects
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.bootstrap import build_app
from zero_memory.domain.records import Channel, DisputeStatus
from zero_memory.domain.verdicts import PortabilityVerdict
from zero_memory.embedding import Embedder
from zero_memory.hygiene.portability import resolve_portability
from zero_memory.judge.base import FailureKind
from zero_memory.judge.fake import FakeAnswer, FakeJudge
from zero_memory.judge.question import Purpose
from zero_memory.judge.questions.pair import PairRequest
from zero_memory.judge.questions.portability import PortabilityRequest
from zero_memory.memory.lifecycle import move_memories
from zero_memory.settings import Settings
from zero_memory.store import system_tx

MakeApp = Callable[..., App]


# -- stale sweep ---------------------------------------------------------------------------


def test_the_stale_sweep_dismisses_a_row_whose_side_was_superseded_elsewhere(make_app: MakeApp, alice: Caller) -> None:
    judge = judge_by_pair({(GREEN, BLUE): ("contradiction", 0.99), TOPICS[1]: ("contradiction", 0.99)})
    app = make_app(judge_factory=factory(judge))
    green, blue = two(app, alice)
    still_open = two(app, alice, TOPICS[1])
    cycle(app)
    row_id = dispute_of(app, green, blue)
    assert row_id is not None
    write(app, alice, "The staging database is purple", links=[supersede(green)])

    run, summary = cycle(app)
    dismissed = dispute_of(app, green, blue)
    assert dismissed is not None and dismissed.status is DisputeStatus.DISMISSED
    assert dismissed.resolution["keep_both"] is True and dismissed.resolved_by == "hygiene.stale_sweep"
    assert summary["dismissed_stale"] == 1
    (entry,) = [e for e in audit_actions(app, "queue.dismiss") if e.payload["dispute_id"] == row_id.id]
    assert entry.run_id == run.id and entry.payload["not_live"] == [green]
    # loss-free: it dismissed a question, it retired nothing
    assert row(app, blue).live
    live_pair = dispute_of(app, *still_open)
    assert live_pair is not None and live_pair.pending


def test_a_dry_run_counts_stale_rows_without_dismissing_them(make_app: MakeApp, alice: Caller) -> None:
    judge = judge_by_pair({(GREEN, BLUE): ("contradiction", 0.99)})
    app = make_app(judge_factory=factory(judge))
    green, blue = two(app, alice)
    cycle(app)
    write(app, alice, "The staging database is purple", links=[supersede(green)])
    _, summary = cycle(app, dry_run=True)
    assert summary["dismissed_stale"] == 1
    still = dispute_of(app, green, blue)
    assert still is not None and still.pending


def test_the_stale_sweep_dismisses_a_pair_whose_sides_now_belong_to_different_projects(
    make_app: MakeApp, alice: Caller
) -> None:
    judge = judge_by_pair({(GREEN, BLUE): ("contradiction", 0.99)})
    app = make_app(judge_factory=factory(judge))
    green, blue = two(app, alice, project_hint="web")
    cycle(app)
    queued = dispute_of(app, green, blue)
    assert queued is not None and queued.pending
    asked = len(judge.requests)
    move_memories(app, alice, [blue], project_hint="api")

    run, summary = cycle(app, rejudge=True)
    dismissed = dispute_of(app, green, blue)
    assert dismissed is not None and dismissed.status is DisputeStatus.DISMISSED
    assert dismissed.resolved_by == "hygiene.stale_sweep" and summary["dismissed_stale"] == 1
    (entry,) = [e for e in audit_actions(app, "queue.dismiss") if e.payload["dispute_id"] == queued.id]
    assert entry.run_id == run.id and entry.payload["reason"] == "cross_project"
    assert entry.payload["projects"] == {green: "scope:proj.alice.web", blue: "scope:proj.alice.api"}
    assert [r for r in judge.requests[asked:] if isinstance(r, PairRequest)] == []  # not even the re-judge pass
    assert row(app, green).live and row(app, blue).live


# -- re-judge ------------------------------------------------------------------------------


def test_the_rejudge_pass_dismisses_only_what_the_judge_now_calls_complementary_or_unrelated(
    make_app: MakeApp, alice: Caller
) -> None:
    first = judge_by_pair({t: ("contradiction", 0.99) for t in TOPICS[:3]} | {TOPICS[3]: ("duplicate", 0.89)})
    app = make_app(judge_factory=factory(first))
    written = [two(app, alice, t) for t in TOPICS[:4]]
    cycle(app)
    assert len(disputes(app)) == 4

    plain = judge_by_pair(default="complementary")
    app.judge_factory = factory(plain)
    cycle(app)
    assert [r for r in plain.requests if isinstance(r, PairRequest)] == []  # never on a plain cycle

    second = judge_by_pair(
        {
            TOPICS[0]: ("complementary", 0.6),
            TOPICS[1]: ("unrelated", 0.6),
            TOPICS[2]: ("contradiction", 1.0),
            TOPICS[3]: ("duplicate", 1.0),
        },
        model="judge-v2",
    )
    app.judge_factory = factory(second)
    run, summary = cycle(app, rejudge=True)
    assert {r.purpose for r in second.requests if isinstance(r, PairRequest)} == {Purpose.REJUDGE}
    assert summary["dismissed_rejudge"] == 2
    statuses = [dispute_of(app, *ids).status for ids in written]  # type: ignore[union-attr]
    assert statuses == [DisputeStatus.DISMISSED, DisputeStatus.DISMISSED, DisputeStatus.PENDING, DisputeStatus.PENDING]
    # never an invalidation, even of a confident duplicate
    assert all(row(app, m).live for ids in written for m in ids)
    dismissals = [e for e in audit_actions(app, "queue.dismiss") if e.run_id == run.id]
    assert sorted(e.payload["rejudge"] for e in dismissals) == ["complementary", "unrelated"]
    assert {e.payload["model"] for e in dismissals} == {"judge-v2"}


def test_a_failed_rejudge_leaves_the_row_pending(make_app: MakeApp, alice: Caller) -> None:
    judge = judge_by_pair({(GREEN, BLUE): [("contradiction", 0.99), FailureKind.TIMEOUT]})
    app = make_app(judge_factory=factory(judge))
    green, blue = two(app, alice)
    cycle(app)
    _, summary = cycle(app, rejudge=True)
    assert summary["failed_judgements"] == 1 and summary["dismissed_rejudge"] == 0
    still = dispute_of(app, green, blue)
    assert still is not None and still.pending


# -- re-examination ------------------------------------------------------------------------


@pytest.fixture
def clock() -> Clock:
    return Clock()


def surface(app: App, memory_id: str, times: int) -> None:
    with app.store.tx(write=True) as tx:
        tx.add_surfacings("alice", [memory_id] * times, app.clock(), session_id="s1", channel=Channel.RECALL)


def rescan_app(make_app: MakeApp, clock: Clock, judge: FakeJudge, model: str = "judge-v1") -> App:
    return make_app({"ZM_HYGIENE_MODEL": model}, clock=clock, judge_factory=factory(judge))


def rescans(judge: FakeJudge) -> list[frozenset[str]]:
    return [
        frozenset((r.a.content, r.b.content))
        for r in judge.requests
        if isinstance(r, PairRequest) and r.purpose is Purpose.RESCAN
    ]


@pytest.fixture
def second_app(embedder: Embedder) -> Iterator[Callable[..., App]]:
    """Another app on an existing ZM_HOME, as a restarted server with other settings would be."""
    opened: list[App] = []

    def open_again(first: App, environ: dict[str, str], **kwargs: Any) -> App:
        env = {"ZM_HOME": str(first.settings.home), "ZM_USER": "alice", **environ}
        app = build_app(Settings.from_environ(env), embedder=embedder, **kwargs)
        opened.append(app)
        return app

    yield open_again
    for app in opened:
        app.close()


def test_a_heavily_used_old_memory_is_examined_once_per_judge_model(
    make_app: MakeApp, second_app: Callable[..., App], alice: Caller, clock: Clock
) -> None:
    judge = FakeJudge(model="judge-v1", default="unrelated")
    app = rescan_app(make_app, clock, judge)
    green, _ = two(app, alice)
    clock.advance(days=30)  # past the lookback: only re-examination reaches it now
    surface(app, green, 10)

    run, summary = cycle(app)
    assert rescans(judge) == [pair(GREEN, BLUE)]
    assert summary["subjects"] == 0 and summary["rescanned"] == 1
    (examined,) = audit_actions(app, "rescan.examine")
    assert examined.memory_ids == [green] and examined.payload["model"] == "judge-v1" and examined.run_id == run.id
    with app.store.tx() as tx:
        assert tx.guarded([green], "judge-v1") == {green}

    _, summary = cycle(app)
    assert len(judge.requests) == 1 and summary["rescanned"] == 0

    newer = FakeJudge(model="judge-v2", default="unrelated")
    upgraded = second_app(app, {"ZM_HYGIENE_MODEL": "judge-v2"}, clock=clock, judge_factory=factory(newer))
    _, summary = cycle(upgraded)
    assert rescans(newer) == [pair(GREEN, BLUE)] and summary["rescanned"] == 1
    assert [e.payload["model"] for e in audit_actions(upgraded, "rescan.examine")] == ["judge-v1", "judge-v2"]
    _, summary = cycle(upgraded)
    assert len(newer.requests) == 1 and summary["rescanned"] == 0


def test_fewer_than_ten_surfacings_or_old_ones_do_not_qualify(make_app: MakeApp, alice: Caller, clock: Clock) -> None:
    judge = FakeJudge(model="judge-v1", default="unrelated")
    app = rescan_app(make_app, clock, judge)
    green, blue = two(app, alice)
    surface(app, blue, 10)  # surfaced long ago
    clock.advance(days=100)
    surface(app, green, 9)
    _, summary = cycle(app)
    assert judge.requests == [] and summary["rescanned"] == 0


def test_re_examination_keeps_every_guard_of_the_sweep(make_app: MakeApp, alice: Caller, clock: Clock) -> None:
    judge = judge_by_pair({(GREEN, BLUE): ("contradiction", 0.99)}, model="judge-v1")
    app = make_app({"ZM_HYGIENE_MODEL": "judge-v1"}, clock=clock, judge_factory=factory(judge))
    green, _ = two(app, alice)
    cycle(app)  # the sweep queues the pair
    clock.advance(days=30)
    surface(app, green, 12)
    _, summary = cycle(app)
    assert summary["rescanned"] == 1 and summary["skipped_settled"] == 1 and rescans(judge) == []


def test_the_queue_cap_stops_a_run_and_the_next_run_continues_where_it_stopped(
    make_app: MakeApp, alice: Caller, clock: Clock
) -> None:
    judge = FakeJudge(model="judge-v1", default=("contradiction", 0.99))
    app = rescan_app(make_app, clock, judge)
    subjects = [two(app, alice, t)[0] for t in TOPICS[:4]]
    clock.advance(days=30)
    for rank, subject in enumerate(subjects):
        surface(app, subject, 14 - rank)  # most surfaced first: subjects[0], [1], [2], [3]

    first_run, first = cycle(app)
    assert first["rescanned"] == 2 and first["queued"] == 2
    examined = [e.memory_ids[0] for e in audit_actions(app, "rescan.examine") if e.run_id == first_run.id]
    assert examined == subjects[:2]
    (stop,) = [e for e in audit_actions(app, "rescan.cap_stop") if e.run_id == first_run.id]
    assert stop.memory_ids == [subjects[1]] and stop.payload["cap"] == 2
    with app.store.tx() as tx:
        assert tx.guarded(subjects, "judge-v1") == set(subjects[:2])

    second_run, second = cycle(app)
    examined = [e.memory_ids[0] for e in audit_actions(app, "rescan.examine") if e.run_id == second_run.id]
    assert examined == subjects[2:]
    assert second["queued"] == 2
    assert {d.origin for d in disputes(app)} == {"rescan"} and len(disputes(app)) == 4


def test_a_run_examines_at_most_five_subjects(make_app: MakeApp, alice: Caller, clock: Clock) -> None:
    judge = FakeJudge(model="judge-v1", default="unrelated")
    app = rescan_app(make_app, clock, judge)
    subjects = [two(app, alice, t)[0] for t in TOPICS]
    clock.advance(days=30)
    for subject in subjects:
        surface(app, subject, 10)
    _, first = cycle(app)
    _, second = cycle(app)
    assert (first["rescanned"], second["rescanned"]) == (5, 1)


# -- portability ---------------------------------------------------------------------------

PORTABLE = "Python's datetime.utcnow() returns a naive datetime"
BORDERLINE = "SQLite WAL mode needs the -shm file next to the database"
LOCAL = "Our billing service reads invoices from the ledger table"
CONFIDENT_NO = "The web app's feature flags live in flags.yaml"


def portability_judge(answers: dict[str, PortabilityVerdict]) -> FakeJudge:
    def answer(request: Any) -> FakeAnswer:
        if isinstance(request, PortabilityRequest):
            return answers[request.memory.content]
        return "unrelated"

    return FakeJudge(answer)


def verdict(portable: bool, confidence: float) -> PortabilityVerdict:
    return PortabilityVerdict(portable=portable, confidence=confidence, rationale="fake portability")


def portability_asked(judge: FakeJudge) -> list[str]:
    return [r.memory.content for r in judge.requests if isinstance(r, PortabilityRequest)]


def test_the_audit_asks_about_project_facts_references_and_gotchas_only(make_app: MakeApp, alice: Caller) -> None:
    judge = FakeJudge(lambda request: False if isinstance(request, PortabilityRequest) else "unrelated")
    app = make_app(judge_factory=factory(judge))
    audited = {
        "fact": "The api listens on port 8080",
        "reference": "Runbooks are in the ops wiki",
        "gotcha": "pip install -e needs a pyproject build backend",
    }
    for kind, text in audited.items():
        write(app, alice, text, kind=kind, project_hint="web")
    for kind in ("convention", "preference", "decision", "episode", "task"):
        write(app, alice, f"A {kind} of the web project about its layout", kind=kind, project_hint="web")
    write(app, alice, "Personal notes are kept in Obsidian", kind="fact")  # not a project scope
    _, summary = cycle(app)
    assert sorted(portability_asked(judge)) == sorted(audited.values())
    assert summary["portability_proposed"] == 0


def test_a_proposal_needs_portable_at_confidence_0_7_and_each_memory_is_a_candidate_once(
    make_app: MakeApp, alice: Caller
) -> None:
    judge = portability_judge(
        {
            PORTABLE: verdict(True, 0.7),
            BORDERLINE: verdict(True, 0.69),
            LOCAL: verdict(False, 0.99),
        }
    )
    app = make_app(judge_factory=factory(judge))
    ids = {text: write(app, alice, text, project_hint="web").id for text in (PORTABLE, BORDERLINE, LOCAL)}
    run, summary = cycle(app)
    assert summary["portability_proposed"] == 1
    with app.store.tx() as tx:
        pending = tx.list_portability(owner="alice", status="pending")
        closed = tx.list_portability(owner="alice", status="closed")
    assert [c.memory_id for c in pending] == [ids[PORTABLE]]
    (proposal,) = pending
    assert (proposal.original_scope, proposal.confidence, proposal.rationale) == (
        "proj.alice.web",
        0.7,
        "fake portability",
    )
    assert proposal.run_id == run.id
    assert sorted(c.memory_id for c in closed) == sorted([ids[BORDERLINE], ids[LOCAL]])
    assert [e.action for e in audit(app, ids[PORTABLE]) if e.action.startswith("portability.")] == [
        "portability.propose"
    ]
    assert row(app, ids[PORTABLE]).scope == "proj.alice.web"  # a proposal moves nothing

    _, summary = cycle(app)
    assert len(portability_asked(judge)) == 3 and summary["portability_proposed"] == 0


def test_a_dismissed_proposal_is_never_made_again(make_app: MakeApp, alice: Caller) -> None:
    judge = portability_judge({PORTABLE: verdict(True, 0.95)})
    app = make_app(judge_factory=factory(judge))
    memory_id = write(app, alice, PORTABLE, project_hint="web").id
    cycle(app)
    with app.store.tx() as tx:
        (proposal,) = tx.list_portability(owner="alice", status="pending")
    resolved = resolve_portability(app, alice, proposal.id, approve=False)
    assert resolved.status == "dismissed" and resolved.scope == "proj.alice.web"
    _, summary = cycle(app)
    assert portability_asked(judge) == [PORTABLE] and summary["portability_proposed"] == 0
    assert row(app, memory_id).scope == "proj.alice.web"


def test_approval_moves_the_memory_to_core_keeping_its_scope_on_record_and_moving_back_undoes_it(
    make_app: MakeApp, alice: Caller
) -> None:
    judge = portability_judge({PORTABLE: verdict(True, 0.95)})
    app = make_app(judge_factory=factory(judge))
    memory_id = write(app, alice, PORTABLE, project_hint="web").id
    cycle(app)
    with app.store.tx() as tx:
        (proposal,) = tx.list_portability(owner="alice", status="pending")
    resolved = resolve_portability(app, alice, proposal.id, approve=True)
    assert resolved.scope == "user.alice.core"
    moved = row(app, memory_id)
    assert (moved.scope, moved.original_scope) == ("user.alice.core", "proj.alice.web")
    assert {"move", "portability.approve"} <= {e.action for e in audit(app, memory_id)}

    back = move_memories(app, alice, [memory_id], scope=moved.original_scope)
    assert back.moved == [memory_id]
    assert row(app, memory_id).scope == "proj.alice.web"
    _, summary = cycle(app)
    assert portability_asked(judge) == [PORTABLE] and summary["portability_proposed"] == 0


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_project_with_another_member_is_not_audited_and_an_earlier_proposal_cannot_be_approved(
    make_app: MakeApp, alice: Caller, backend: str
) -> None:
    """On PostgreSQL alice's own transaction sees only her membership row: who else reads the project
    is asked as a system pass, or bob's membership would go unseen and the approval would go through."""
    shared_text = "Git's rerere remembers how a conflict was resolved"
    judge = portability_judge({PORTABLE: verdict(True, 0.95), shared_text: verdict(True, 0.95)})
    app = make_app(judge_factory=factory(judge), backend=backend)
    memory_id = write(app, alice, PORTABLE, project_hint="web").id
    cycle(app)
    with system_tx(app.store, "test") as tx:
        (proposal,) = tx.list_portability(owner="alice", status="pending")
    with system_tx(app.store, "operator", write=True) as tx:
        projects.grant(tx, "alice", "proj.alice.web", "bob", "reader")
    write(app, alice, shared_text, project_hint="web")
    _, summary = cycle(app)
    assert portability_asked(judge) == [PORTABLE] and summary["portability_proposed"] == 0

    with pytest.raises(errors.ZMError) as refused:
        resolve_portability(app, alice, proposal.id, approve=True)
    assert str(refused.value).startswith("conflict: the memory is in the project proj.alice.web")
    assert row(app, memory_id).scope == "proj.alice.web"
    with system_tx(app.store, "test") as tx:
        assert [c.id for c in tx.list_portability(owner="alice", status="pending")] == [proposal.id]
    assert "portability.approve" not in {e.action for e in audit(app, memory_id)}


def test_a_failed_portability_judgement_files_nothing_and_is_asked_again(make_app: MakeApp, alice: Caller) -> None:
    answers: list[FakeAnswer] = [FailureKind.MALFORMED, verdict(True, 0.9)]
    judge = FakeJudge(lambda r: answers.pop(0) if isinstance(r, PortabilityRequest) else "unrelated")
    app = make_app(judge_factory=factory(judge))
    write(app, alice, PORTABLE, project_hint="web")
    _, first = cycle(app)
    with app.store.tx() as tx:
        assert tx.list_portability(owner="alice", status=None) == []
    _, second = cycle(app)
    assert (first["failed_judgements"], second["portability_proposed"]) == (1, 1)


def test_the_audit_is_capped_per_run_and_takes_the_most_used_first(make_app: MakeApp, alice: Caller) -> None:
    judge = FakeJudge(lambda request: False if isinstance(request, PortabilityRequest) else "unrelated")
    app = make_app(judge_factory=factory(judge))
    texts = [f"Service number {n} of the web project has its own quirks" for n in range(12)]
    ids = [write(app, alice, text, project_hint="web").id for text in texts]
    surface(app, ids[11], 3)
    surface(app, ids[10], 2)
    cycle(app)
    first = portability_asked(judge)
    assert len(first) == 10 and first[:2] == [texts[11], texts[10]]
    cycle(app)
    assert sorted(portability_asked(judge)[10:]) == sorted(set(texts) - set(first))


# -- a dry run of every pass -----------------------------------------------------------------


def test_a_dry_run_of_a_full_cycle_records_nothing_but_its_run(make_app: MakeApp, alice: Caller, clock: Clock) -> None:
    def answer(request: Any) -> FakeAnswer:
        if isinstance(request, PortabilityRequest):
            return verdict(True, 0.95)
        return ("contradiction", 0.99)

    judge = FakeJudge(answer, model="judge-v1")
    app = rescan_app(make_app, clock, judge)
    green, _ = two(app, alice)
    write(app, alice, PORTABLE, project_hint="web")
    clock.advance(days=30)
    surface(app, green, 10)

    _, summary = cycle(app, dry_run=True)
    assert (summary["rescanned"], summary["queued"], summary["portability_proposed"]) == (1, 1, 1)
    assert disputes(app, status=None) == []
    with app.store.tx() as tx:
        assert tx.guarded([green], "judge-v1") == set()
        assert tx.list_portability(owner="alice", status=None) == []
    assert audit_actions(app, "rescan.examine") == [] and audit_actions(app, "queue.raise") == []
