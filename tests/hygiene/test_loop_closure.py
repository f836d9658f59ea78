"""The loop-closure stage in process, with a FakeJudge: the decision, the evidence, the cap, the models,
dry runs and the undo. The question it asks is tested in tests/judge/questions/test_loop_closure.py."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.hygiene.pipeline import cycle, factory
from tests.memory.helpers import write
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.conflicts.challenge import challenge
from zero_memory.hygiene.loop_closure import cache_key, closes
from zero_memory.hygiene.undo import undo_run
from zero_memory.judge.base import FailureKind
from zero_memory.judge.fake import FakeJudge
from zero_memory.judge.questions.loop_closure import LoopClosureRequest
from zero_memory.memory.lifecycle import get_memory
from zero_memory.store import SYSTEM, system_tx

MakeApp = Callable[..., App]
TASK = "Add retries to the invoice mailer"
DONE = "Add retries to the invoice mailer: done, the mailer now retries three times"


@pytest.mark.parametrize(
    ("closed", "confidence", "expected"),
    [(True, 0.85, True), (True, 0.99, True), (True, 0.849, False), (False, 0.99, False), (False, 0.2, False)],
)
def test_only_a_confident_closed_closes(closed: bool, confidence: float, expected: bool) -> None:
    assert closes(closed, confidence, 0.85) is expected


def test_the_cache_key_is_never_a_pair_key() -> None:
    assert "|" not in cache_key("mem_a", "mem_b") and cache_key("mem_a", "mem_b") != cache_key("mem_b", "mem_a")


def test_a_full_cycle_closes_the_loop_links_its_evidence_and_undo_reopens_it(make_app: MakeApp, alice: Caller) -> None:
    judge = FakeJudge(lambda r: (True, 0.9) if isinstance(r, LoopClosureRequest) else "unrelated")
    app = make_app(judge_factory=factory(judge))
    task = write(app, alice, TASK, "task", scope="personal")
    done = write(app, alice, DONE, "episode", scope="personal")
    run, summary = cycle(app)
    assert summary["loops_closed"] == 1
    shown = get_memory(app, alice, task.id)
    assert shown.memory.invalidated_reason == "closed"
    assert [(lk.src, lk.dst) for lk in shown.links] == [(done.id, task.id)]
    report = undo_run(app, run.id, actor="alice")
    assert report.restored == [task.id] and report.unlinked == 1
    _, second = cycle(app)
    assert second["loops_closed"] == 0 and get_memory(app, alice, task.id).memory.status == "live"


def test_provisional_evidence_goes_to_the_fast_model(make_app: MakeApp, alice: Caller) -> None:
    judge = FakeJudge(lambda r: (False, 0.9) if isinstance(r, LoopClosureRequest) else "unrelated")
    app = make_app(judge_factory=factory(judge))
    task = write(app, alice, TASK, "task", scope="personal")
    write(app, alice, DONE, "episode", scope="personal", provisional=True)
    cycle(app)
    asked = [r for r in judge.requests if isinstance(r, LoopClosureRequest)]
    assert len(asked) == 1 and asked[0].provisional and judge.model_for(asked[0]) == "fake-fast"
    with app.store.tx() as tx:
        assert tx.get_memory(task.id, SYSTEM).live  # type: ignore[union-attr]


def test_older_other_scope_and_loop_evidence_is_never_asked(make_app: MakeApp, alice: Caller, bob: Caller) -> None:
    judge = FakeJudge(lambda r: (True, 0.99) if isinstance(r, LoopClosureRequest) else "unrelated")
    app = make_app(judge_factory=factory(judge))
    write(app, alice, DONE, "episode", scope="personal")  # older than the loop
    write(app, alice, TASK, "task", scope="personal")
    write(app, alice, DONE + " (in the api project)", "episode", project_hint="/srv/api")  # another scope
    write(app, alice, TASK + " for the reminders too", "task", scope="personal")  # another open loop
    write(app, bob, DONE, "episode", scope="personal")  # another owner
    _, summary = cycle(app)
    assert [r for r in judge.requests if isinstance(r, LoopClosureRequest)] == []
    assert summary["loops_closed"] == 0


def test_the_stage_is_capped_per_run_and_fails_closed(make_app: MakeApp, alice: Caller) -> None:
    judge = FakeJudge(lambda r: FailureKind.MALFORMED if isinstance(r, LoopClosureRequest) else "unrelated")
    app = make_app({}, judge_factory=factory(judge))
    app.settings = app.settings.with_changes(hygiene=app.settings.hygiene.__class__(loop_closure_max_per_run=2))
    for n in range(4):
        write(app, alice, f"{TASK} number {n}", "task", scope="personal")
    for n in range(4):
        write(app, alice, f"{DONE} number {n}", "episode", scope="personal")
    _, summary = cycle(app)
    assert len([r for r in judge.requests if isinstance(r, LoopClosureRequest)]) == 2
    assert summary["failed_judgements"] == 2 and summary["loops_closed"] == 0
    assert any("cap of 2" in note for note in summary["notes"])


def test_a_dry_run_counts_and_changes_nothing(make_app: MakeApp, alice: Caller) -> None:
    judge = FakeJudge(lambda r: (True, 0.95) if isinstance(r, LoopClosureRequest) else "unrelated")
    app = make_app(judge_factory=factory(judge))
    task = write(app, alice, TASK, "task", scope="personal")
    write(app, alice, DONE, "episode", scope="personal")
    _, summary = cycle(app, dry_run=True)
    assert summary["loops_closed"] == 1
    with app.store.tx() as tx:
        assert tx.get_memory(task.id, SYSTEM).live  # type: ignore[union-attr]


@pytest.mark.parametrize(("backend", "dry_run"), [("sqlite", True), ("sqlite", False), ("postgres", True)])
def test_a_loop_a_person_is_deciding_about_is_neither_asked_nor_counted_closed(
    make_app: MakeApp, alice: Caller, backend: str, dry_run: bool
) -> None:
    judge = FakeJudge(lambda r: (True, 0.99) if isinstance(r, LoopClosureRequest) else "unrelated")
    app = make_app(backend=backend, judge_factory=factory(judge))
    task = write(app, alice, TASK, "task", scope="personal")
    challenge(app, Caller("alice", client="test-agent", session_id="s1"), task.id, "We dropped the mailer")
    write(app, alice, DONE, "episode", scope="personal")
    _, summary = cycle(app, dry_run=dry_run)
    assert summary["loops_closed"] == 0
    assert [r for r in judge.requests if isinstance(r, LoopClosureRequest)] == []
    with system_tx(app.store, "test") as tx:  # a named pass: PostgreSQL's row security hides rows from nobody
        assert tx.get_memory(task.id, SYSTEM).live  # type: ignore[union-attr]
