"""Settlements carried out on a real store: the state and audit rows they leave, and restore_memory undoing them."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.memory.helpers import write
from tests.reliability.consistency import assert_consistent
from zero_memory import errors, transitions
from zero_memory.access.caller import Caller
from zero_memory.access.visibility import visibility
from zero_memory.app import App
from zero_memory.conflicts.apply import apply
from zero_memory.conflicts.choice import Choice, Forget, KeepBoth, Merge, Retire, Winner
from zero_memory.conflicts.plan import plan
from zero_memory.conflicts.queue import visible_dispute
from zero_memory.conflicts.resolve import context, resolve_conflict
from zero_memory.domain.memory import Memory, Status
from zero_memory.domain.records import AuditEntry, Dispute, DisputeShape, DisputeStatus, pair_key
from zero_memory.ids import new_id
from zero_memory.memory.lifecycle import forget, restore_memory
from zero_memory.store import SYSTEM, system_tx

MERGED_TEXT = "The staging database is teal since the March move"


@dataclass(frozen=True)
class Row:
    dispute: Dispute
    a: str
    b: str | None


TEXTS = ("The staging database is green", "The staging database runs PostgreSQL 16 on port 5433")


def raise_row(
    app: App, caller: Caller, *, single: bool = False, verdict: str = "duplicate", texts: tuple[str, str] = TEXTS
) -> Row:
    a = write(app, caller, texts[0]).id
    b = None if single else write(app, caller, texts[1]).id
    dispute = Dispute(
        id=new_id("dsp"),
        owner=caller.uid,
        shape=DisputeShape.SINGLE if single else DisputeShape.PAIR,
        verdict="challenged" if single else verdict,
        origin="scan",
        status=DisputeStatus.PENDING,
        memory_a=a,
        memory_b=b,
        pair_key=pair_key(a, b) if b else None,
        created_at=app.clock(),
    )
    with system_tx(app.store, "test", write=True) as tx:
        transitions.raise_dispute(tx, dispute, actor=caller.uid, at=app.clock())
    return Row(dispute, a, b)


def memory(app: App, memory_id: str) -> Memory:
    with system_tx(app.store, "test") as tx:
        found = tx.get_memory(memory_id, SYSTEM)
    assert found is not None
    return found


def trail(app: App, *memory_ids: str) -> list[AuditEntry]:
    """Every audit row naming any of the memories, once each, in the order written, the writes left out."""
    with system_tx(app.store, "test") as tx:
        rows = {e.seq: e for mid in memory_ids for e in tx.audit_for_memory(mid, limit=1000)}
    return [rows[seq] for seq in sorted(rows) if rows[seq].action not in ("remember", "queue.raise")]


def dispute_row(app: App, dispute_id: str) -> Dispute:
    with system_tx(app.store, "test") as tx:
        found = tx.get_dispute(dispute_id)
    assert found is not None
    return found


def supersedes_links(app: App, memory_id: str) -> set[tuple[str, str]]:
    with system_tx(app.store, "test") as tx:
        return {(lk.src, lk.dst) for lk in tx.links_of(memory_id) if lk.type == "supersedes"}


# (choice on a pair row, the resolution, each invalidated side: (reason, successor), the audit actions in order)
PAIR_CASES = {
    "keep_both": (lambda a, b: KeepBoth(), {"keep_both": True}, {}, ["queue.resolve"]),
    "winner": (
        lambda a, b: Winner(b),
        {"winner": "B"},
        {"A": ("duplicate", "B")},
        ["resolve.winner", "queue.resolve"],
    ),
    "forget": (lambda a, b: Forget(a), {"forget": "A"}, {"A": ("forgotten", None)}, ["forget", "queue.resolve"]),
    "merge": (
        lambda a, b: Merge(MERGED_TEXT),
        {"merge": "NEW"},
        {"A": ("merged", "NEW"), "B": ("merged", "NEW")},
        ["merge", "merge.retire", "merge.retire", "queue.resolve"],
    ),
}


@pytest.mark.parametrize("case", PAIR_CASES)
def test_a_pair_settlement_leaves_its_state_and_audit_rows_and_restore_undoes_every_invalidation(
    app: App, alice: Caller, case: str
) -> None:
    make_choice, resolution, invalidated, actions = PAIR_CASES[case]
    row = raise_row(app, alice)
    assert row.b is not None
    result = resolve_conflict(app, alice, row.dispute.id, make_choice(row.a, row.b))
    names = {row.a: "A", row.b: "B", result.created or "": "NEW"}
    named = {k: names.get(v, v) if isinstance(v, str) else v for k, v in result.resolution.items()}

    assert named == resolution
    assert [names[i] for i in result.invalidated] == list(invalidated)
    settled = dispute_row(app, row.dispute.id)
    assert (settled.status, settled.resolution, settled.resolved_by) == (
        DisputeStatus.RESOLVED,
        result.resolution,
        "alice",
    )
    for mid, name in ((row.a, "A"), (row.b, "B")):
        now = memory(app, mid)
        if name in invalidated:
            reason, successor = invalidated[name]
            assert (now.status, now.invalidated_reason, now.superseded_by) == (
                Status.INVALIDATED,
                reason,
                {"B": row.b, "NEW": result.created}.get(successor or ""),
            )
        else:
            assert now.live
    entries = trail(app, row.a, row.b)
    assert [e.action for e in entries] == actions
    for entry in entries:
        assert (entry.actor, entry.owner, entry.run_id, entry.payload["dispute_id"]) == (
            "alice",
            "alice",
            None,
            row.dispute.id,
        )
    assert entries[-1].memory_ids == [row.a, row.b]
    assert entries[-1].payload == {
        "dispute_id": row.dispute.id,
        "verdict": "duplicate",
        **result.resolution,
        "settled_by": "agent",  # an agent settled (alice's test client): it spends no misled signals
    }
    assert_consistent(app.store)

    for mid in result.invalidated:
        assert restore_memory(app, alice, mid).changed
        assert memory(app, mid).live and not supersedes_links(app, mid)
    assert dispute_row(app, row.dispute.id).status is DisputeStatus.RESOLVED
    assert_consistent(app.store)


def test_a_merge_creates_an_embedded_memory_with_its_audit_row_superseding_both(app: App, alice: Caller) -> None:
    row = raise_row(app, alice)
    result = resolve_conflict(app, alice, row.dispute.id, Merge(MERGED_TEXT), human=True)
    assert result.created is not None
    merged = memory(app, result.created)
    assert (merged.content, merged.author_kind, merged.agent_name, int(merged.rank)) == (
        MERGED_TEXT,
        "human",
        "dashboard",
        2,
    )
    assert merged.source == {"merged_from": f"{row.a},{row.b}"}
    with system_tx(app.store, "test") as tx:
        assert tx.memory_vector(merged.id) is not None
        (created,) = [e for e in tx.audit_for_memory(merged.id) if e.action == "merge"]
    assert created.memory_ids == [merged.id, row.a, row.b]
    assert created.payload == {"dispute_id": row.dispute.id, "rank": 2}
    assert supersedes_links(app, merged.id) == {(merged.id, row.a), (merged.id, row.b)}


@pytest.mark.parametrize(
    ("choice", "resolution", "retired"),
    [(KeepBoth(), {"uphold": True}, False), (Retire(), {"retire": True}, True)],
    ids=["uphold", "retire"],
)
def test_a_single_subject_row_is_upheld_or_retired_with_no_successor_and_restore_undoes_it(
    app: App, alice: Caller, choice: Choice, resolution: dict[str, bool], retired: bool
) -> None:
    row = raise_row(app, alice, single=True)
    result = resolve_conflict(app, alice, row.dispute.id, choice)
    assert (result.resolution, result.invalidated) == (resolution, [row.a] if retired else [])
    subject = memory(app, row.a)
    if retired:
        assert (subject.status, subject.invalidated_reason, subject.superseded_by) == (
            Status.INVALIDATED,
            "retired",
            None,
        )
    entries = trail(app, row.a)
    assert [e.action for e in entries] == (["retire"] if retired else []) + ["queue.resolve"]
    assert entries[-1].payload == {
        "dispute_id": row.dispute.id,
        "verdict": "challenged",
        **resolution,
        "settled_by": "agent",
    }
    assert_consistent(app.store)
    if retired:
        assert restore_memory(app, alice, row.a).changed and memory(app, row.a).live


def test_a_refused_settlement_writes_nothing(app: App, alice: Caller) -> None:
    row = raise_row(app, alice)
    assert row.b is not None
    forget(app, alice, row.b)
    before = trail(app, row.a, row.b)
    with pytest.raises(errors.ZMError, match=r"^conflict: .* is not live; restore it first$"):
        resolve_conflict(app, alice, row.dispute.id, Winner(row.b))
    with pytest.raises(errors.ZMError, match=r"^validation_failed: retire: settles single-subject"):
        resolve_conflict(app, alice, row.dispute.id, Retire())
    assert trail(app, row.a, row.b) == before
    assert dispute_row(app, row.dispute.id).status is DisputeStatus.PENDING and memory(app, row.a).live


def test_a_plan_whose_row_was_settled_meanwhile_is_refused_and_rolled_back(app: App, alice: Caller) -> None:
    """Two writers can read the same pending row on PostgreSQL; the second to settle it must change nothing."""
    row = raise_row(app, alice)
    assert row.b is not None
    with system_tx(app.store, "test") as tx:
        vis = visibility(tx, alice.uid)
        dispute, memories = visible_dispute(tx, vis, row.dispute.id)
    stale = plan(dispute, memories, Winner(row.b), context(app, vis, alice, human=False))
    resolve_conflict(app, alice, row.dispute.id, KeepBoth())
    before = trail(app, row.a, row.b)
    refused = rf"^conflict: already_resolved: dispute {row.dispute.id} is resolved$"
    with pytest.raises(errors.ZMError, match=refused), system_tx(app.store, "test", write=True) as tx:
        apply(tx, stale)
    assert memory(app, row.a).live and not supersedes_links(app, row.a)
    assert trail(app, row.a, row.b) == before
    assert dispute_row(app, row.dispute.id).resolution == {"keep_both": True}
    assert_consistent(app.store)
