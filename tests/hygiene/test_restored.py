"""A restored memory stays: once restored (by a person, an agent or an undo), automation may queue a pair
whose loser it would be, never invalidate it again — on the sweep, the write trigger, re-examination, the
retro pass and same-session refinement. The judge here always says the newer memory replaces the older."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.hygiene.pipeline import BLUE, GREEN, cycle, factory
from tests.memory.helpers import supersede, write
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.conflicts.challenge import challenge
from zero_memory.domain.memory import Memory
from zero_memory.domain.records import Channel, Dispute, pair_key
from zero_memory.hygiene import reexamine
from zero_memory.hygiene.retro import retro
from zero_memory.hygiene.runs import Tally
from zero_memory.hygiene.undo import undo_run
from zero_memory.judge.fake import FakeAnswer, FakeJudge
from zero_memory.judge.questions.pair import PairRequest
from zero_memory.judge.questions.portability import PortabilityRequest
from zero_memory.memory.lifecycle import get_memory, restore_memory
from zero_memory.store import SYSTEM, system_tx

MakeApp = Callable[..., App]


def newer_always_wins(request: object) -> FakeAnswer:
    """An adversarial judge: whatever the pair, the newer memory (B) replaces the older (A), confidently."""
    if isinstance(request, PortabilityRequest):
        return False
    if isinstance(request, PairRequest):
        return ("b_supersedes_a", 0.99)
    return (False, 0.1)  # loop closure: never closed


def judged_app(make_app: MakeApp, environ: dict[str, str] | None = None, **kwargs: object) -> App:
    return make_app(environ or {}, judge_factory=factory(FakeJudge(newer_always_wins)), **kwargs)


def memory(app: App, memory_id: str) -> Memory:
    with system_tx(app.store, "test") as tx:
        found = tx.get_memory(memory_id, SYSTEM)
    assert found is not None
    return found


def queued(app: App, a: str, b: str) -> Dispute | None:
    with system_tx(app.store, "test") as tx:
        return tx.dispute_for_pair(pair_key(a, b))


def superseded_then_restored(app: App, alice: Caller) -> tuple[str, str]:
    """A, then B declaring it supersedes A; A restored. Returns (A, B)."""
    old = write(app, alice, GREEN).id
    new = write(app, alice, BLUE, links=[supersede(old)])
    assert new.superseded == [old]
    restore_memory(app, alice, old)
    return old, new.id


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_the_sweep_queues_a_pair_whose_loser_was_restored(make_app: MakeApp, alice: Caller, backend: str) -> None:
    app = judged_app(make_app, backend=backend)
    old, new = superseded_then_restored(app, alice)
    assert memory(app, old).restored and get_memory(app, alice, old).memory.restored
    _, summary = cycle(app)
    assert summary["auto_resolved"] == 0 and summary["queued"] == 1
    assert memory(app, old).live
    row = queued(app, old, new)
    assert row is not None and row.pending and (row.verdict, row.direction) == ("supersedes", "b_supersedes_a")
    _, again = cycle(app)
    assert again["auto_resolved"] == 0 and memory(app, old).live


def test_an_undone_loser_counts_as_restored(make_app: MakeApp, alice: Caller) -> None:
    """The undo restores; the next model to look (a new judge model skips the judgement cache) only queues."""
    app = judged_app(make_app)
    old = write(app, alice, GREEN).id
    new = write(app, alice, BLUE).id
    run, summary = cycle(app)
    assert summary["auto_resolved"] == 1 and not memory(app, old).live
    undo_run(app, run.id, actor="alice", owner="alice")
    assert memory(app, old).restored
    app.judge_factory = factory(FakeJudge(newer_always_wins, model="another-model"))
    _, again = cycle(app)
    assert again["auto_resolved"] == 0 and again["queued"] == 1 and memory(app, old).live
    assert queued(app, old, new) is not None


def test_the_write_trigger_queues_against_a_restored_memory(make_app: MakeApp, alice: Caller) -> None:
    app = judged_app(make_app, {"ZM_HYGIENE_ON_WRITE": "1"})
    old, _ = superseded_then_restored(app, alice)
    app.wait_idle()
    later = write(app, alice, "The staging database is purple").id
    app.wait_idle()
    assert memory(app, old).live
    row = queued(app, old, later)
    assert row is not None and row.origin == "write"


def test_re_examination_queues_against_a_restored_memory(make_app: MakeApp, alice: Caller) -> None:
    app = judged_app(make_app, {"ZM_HYGIENE_MODEL": "fake-strong"})
    old, new = superseded_then_restored(app, alice)
    with system_tx(app.store, "test", write=True) as tx:
        tx.add_surfacings("alice", [old] * 12, app.clock(), session_id="s1", channel=Channel.RECALL)
    tally = Tally()
    reexamine.step(app, "alice", tally, None, False)
    assert tally.counts["rescanned"] == 1 and tally.counts["auto_resolved"] == 0 and tally.counts["queued"] == 1
    assert memory(app, old).live and queued(app, old, new) is not None


def test_the_retro_pass_queues_against_a_restored_memory(make_app: MakeApp, alice: Caller) -> None:
    app = judged_app(make_app)
    old, new = superseded_then_restored(app, alice)
    report = retro(app, "alice", max_new_rows=5, started_by="alice")
    assert report.summary["auto_resolved"] == 0 and memory(app, old).live
    assert queued(app, old, new) is not None


def test_same_session_refinement_queues_against_a_restored_memory(make_app: MakeApp) -> None:
    app = make_app()
    session = Caller("alice", client="test", session_id="conv-restored")
    older = write(app, session, "The deploy script lives in scripts/deploy.sh")
    newer = write(app, session, "The deploy script lives in scripts/deploy.sh.")
    assert newer.superseded == [older.id]
    restore_memory(app, session, older.id)
    third = write(app, session, "The deploy script lives in scripts/deploy.sh !")
    assert older.id not in third.superseded and memory(app, older.id).live
    row = queued(app, older.id, third.id)
    assert row is not None and row.pending and row.origin == "refine"
    assert (row.verdict, row.direction, row.memory_a, row.memory_b) == (
        "supersedes",
        "b_supersedes_a",
        older.id,
        third.id,
    )


def test_same_session_refinement_queues_against_a_challenged_memory(make_app: MakeApp) -> None:
    """A pending row is a person deciding about the memory: a refinement asks too, rather than retire it."""
    app = make_app()
    session = Caller("alice", client="test", session_id="conv-challenged")
    older = write(app, session, "The deploy script lives in scripts/deploy.sh")
    challenge(app, session, older.id, "it moved to tools/")
    newer = write(app, session, "The deploy script lives in scripts/deploy.sh.")
    assert newer.superseded == [] and memory(app, older.id).live
    row = queued(app, older.id, newer.id)
    assert row is not None and row.pending and row.origin == "refine"
    assert "pending review-queue row" in (row.rationale or "")


def test_same_session_refinement_retires_an_unchallenged_memory(make_app: MakeApp) -> None:
    app = make_app()
    session = Caller("alice", client="test", session_id="conv-plain")
    older = write(app, session, "The deploy script lives in scripts/deploy.sh")
    newer = write(app, session, "The deploy script lives in scripts/deploy.sh.")
    assert newer.superseded == [older.id] and not memory(app, older.id).live
    assert queued(app, older.id, newer.id) is None
