"""Re-examination is paced, not dropped: a subject the queue cap interrupts leads the next run; on both stores.

(The other re-examination rules are in test_passes.)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest

from tests.hygiene.helpers import Clock
from tests.hygiene.pipeline import cycle, factory
from tests.memory.helpers import write
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.domain.records import AuditEntry, Channel
from zero_memory.judge.fake import FakeJudge
from zero_memory.judge.question import Purpose
from zero_memory.judge.questions.pair import PairRequest
from zero_memory.store import SYSTEM, system_tx

MakeApp = Callable[..., App]
MODEL = "judge-v1"
SUBJECT = "The staging database is green"
NEIGHBOURS = ["The staging database is blue", "The staging database is red", "The staging database is yellow"]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.slow)])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def surface(app: App, memory_id: str, times: int) -> None:
    with system_tx(app.store, "test", write=True) as tx:
        tx.add_surfacings("alice", [memory_id] * times, app.clock(), session_id="s1", channel=Channel.RECALL)


def rescanned_pairs(judge: FakeJudge) -> Counter[frozenset[str]]:
    return Counter(
        frozenset((r.a.content, r.b.content))
        for r in judge.requests
        if isinstance(r, PairRequest) and r.purpose is Purpose.RESCAN
    )


def guarded(app: App, ids: list[str]) -> set[str]:
    with system_tx(app.store, "test") as tx:
        return tx.guarded(ids, MODEL)


def audited(app: App, action: str, run_id: str) -> list[AuditEntry]:
    with system_tx(app.store, "test") as tx:
        return [e for e in tx.audit_for_run(run_id) if e.action == action]


def test_a_subject_the_cap_interrupts_leads_the_next_run_and_each_neighbour_is_judged_once(
    make_app: MakeApp, backend: str, alice: Caller
) -> None:
    clock = Clock()
    judge = FakeJudge(model=MODEL, default=("contradiction", 0.99))
    app = make_app({"ZM_HYGIENE_MODEL": MODEL}, backend=backend, clock=clock, judge_factory=factory(judge))
    subject = write(app, alice, SUBJECT).id
    for text in NEIGHBOURS:
        write(app, alice, text)
    clock.advance(days=30)  # past the lookback: only re-examination reaches them
    surface(app, subject, 10)

    first_run, first = cycle(app)  # the cap of two new rows stops it after two of the three neighbours
    assert first["queued"] == 2 and first["rescanned"] == 0
    assert guarded(app, [subject]) == set()
    (stop,) = audited(app, "rescan.cap_stop", first_run.id)
    assert stop.memory_ids == [subject] and stop.payload == {"cap": 2, "subject_finished": False}
    assert audited(app, "rescan.examine", first_run.id) == []

    second_run, second = cycle(app)
    assert second["queued"] == 1 and second["rescanned"] == 1 and second["skipped_settled"] == 2
    assert guarded(app, [subject]) == {subject}
    (examined,) = audited(app, "rescan.examine", second_run.id)
    assert examined.memory_ids == [subject]

    _, third = cycle(app)
    assert third["rescanned"] == 0
    assert rescanned_pairs(judge) == Counter({frozenset((SUBJECT, n)): 1 for n in NEIGHBOURS})


def test_a_subject_retired_before_its_turn_is_neither_examined_nor_stamped(
    make_app: MakeApp, backend: str, alice: Caller
) -> None:
    clock = Clock()
    judge = FakeJudge(model=MODEL, default=("duplicate", 0.97))
    app = make_app({"ZM_HYGIENE_MODEL": MODEL}, backend=backend, clock=clock, judge_factory=factory(judge))
    older = write(app, alice, SUBJECT).id
    newer = write(app, alice, NEIGHBOURS[0]).id
    clock.advance(days=30)
    surface(app, newer, 12)  # examined first: its duplicate verdict retires the older memory
    surface(app, older, 10)

    run, summary = cycle(app)
    with system_tx(app.store, "test") as tx:
        retired = tx.get_memory(older, SYSTEM)
    assert retired is not None and not retired.live
    assert summary["rescanned"] == 1 and summary["auto_resolved"] == 1
    assert guarded(app, [older, newer]) == {newer}
    assert [e.memory_ids for e in audited(app, "rescan.examine", run.id)] == [[newer]]
