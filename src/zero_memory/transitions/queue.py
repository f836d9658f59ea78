"""The review queue: a row raised, the guard that turns a held-back automatic retirement into one, its settlement,
escalation and dismissal, and a session's challenge.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from zero_memory.domain.memory import InvalidationReason, Memory, retirable_by_automation
from zero_memory.domain.records import Dispute, DisputeStatus, Link
from zero_memory.ids import new_id
from zero_memory.store.base import Tx
from zero_memory.transitions.memories import retire


@dataclass(frozen=True, slots=True)
class Queued:
    """The review-queue row an automatic retirement becomes when the guard holds it back."""

    dispute: Dispute
    payload: Mapping[str, object] = field(default_factory=dict)
    contradicts: bool = False


def raise_dispute(
    tx: Tx,
    dispute: Dispute,
    *,
    actor: str,
    at: datetime,
    payload: Mapping[str, object] | None = None,
    contradicts: bool = False,
) -> tuple[Dispute, bool]:
    """File a review-queue row with its audit row; ``(the row, True)``, or the pair's existing row and False.

    ``contradicts``: the row is a contradiction, and a raised row links its sides ``contradicts`` (B to A,
    in the row's run) unless they are linked so already; the row's audit row covers the link.
    """
    if not tx.add_dispute(dispute):
        existing = tx.dispute_for_pair(dispute.pair_key) if dispute.pair_key else None
        return existing or dispute, False
    ids = [dispute.memory_a] + ([dispute.memory_b] if dispute.memory_b else [])
    tx.add_audit(
        actor=actor,
        action="queue.raise",
        owner=dispute.owner,
        memory_ids=ids,
        payload={"dispute_id": dispute.id, "verdict": dispute.verdict, **(payload or {})},
        run_id=dispute.run_id,
        at=at,
    )
    b = dispute.memory_b
    if contradicts and b is not None and not tx.has_link(dispute.memory_a, b, "contradicts"):
        tx.add_link(Link(new_id("lnk"), b, dispute.memory_a, "contradicts", at, actor, dispute.run_id))
    return dispute, True


def held_back(tx: Tx, memory: Memory) -> bool:
    """The guard's rule as ``tx`` sees the memory: True when automation may not retire it (restored, or with a
    pending row). A stage that must know before it asks a judge reads it here."""
    return not retirable_by_automation(memory.restored, bool(tx.open_disputes_for([memory.id])))


def hold(tx: Tx, memory: Memory, queued: Queued | None, *, actor: str, at: datetime) -> bool:
    """The guard of every automatic retirement: True when automation may not retire ``memory`` (restored, or
    with a pending row), and then ``queued`` is raised instead (None: nothing to ask, the memory stays)."""
    if not held_back(tx, memory):
        return False
    if queued is not None:
        raise_dispute(tx, queued.dispute, actor=actor, at=at, payload=queued.payload, contradicts=queued.contradicts)
    return True


def retire_automatically(
    tx: Tx,
    old: Memory,
    *,
    queued: Queued,
    successor: str | None,
    reason: InvalidationReason,
    actor: str,
    action: str,
    at: datetime,
    payload: Mapping[str, object] | None = None,
    run_id: str | None = None,
) -> bool:
    """``retire`` by automation (a hygiene pass, a refinement, a verification): True when retired, False when
    the guard held it back and ``queued`` joined the review queue instead."""
    if hold(tx, old, queued, actor=actor, at=at):
        return False
    retire(
        tx, old, successor=successor, reason=reason, actor=actor, action=action, at=at, payload=payload, run_id=run_id
    )
    return True


def resolve_dispute(
    tx: Tx,
    dispute: Dispute,
    resolution: Mapping[str, object],
    *,
    actor: str,
    at: datetime,
    payload: Mapping[str, object] | None = None,
) -> bool:
    """Settle a pending row as a person or an agent decided, with its audit row (``payload`` adds to it,
    e.g. who settled); False (and no row) if it was settled."""
    if not tx.settle_dispute(dispute.id, DisputeStatus.RESOLVED, dict(resolution), actor, at):
        return False
    ids = [dispute.memory_a] + ([dispute.memory_b] if dispute.memory_b else [])
    tx.add_audit(
        actor=actor,
        action="queue.resolve",
        owner=dispute.owner,
        memory_ids=ids,
        payload={"dispute_id": dispute.id, "verdict": dispute.verdict, **resolution, **(payload or {})},
        run_id=None,
        at=at,
    )
    return True


def escalate(
    tx: Tx,
    dispute: Dispute,
    verdict: str,
    *,
    actor: str,
    at: datetime,
    run_id: str | None,
    payload: Mapping[str, object] | None = None,
) -> bool:
    """Give a pending row a graver verdict in place (a challenge that became a stale suspect): the same row,
    never a second one; False when it was settled or changed meanwhile."""
    if not tx.escalate_dispute(dispute.id, dispute.verdict, verdict, run_id):
        return False
    ids = [dispute.memory_a] + ([dispute.memory_b] if dispute.memory_b else [])
    tx.add_audit(
        actor=actor,
        action="queue.escalate",
        owner=dispute.owner,
        memory_ids=ids,
        payload={"dispute_id": dispute.id, "from": dispute.verdict, "verdict": verdict, **(payload or {})},
        run_id=run_id,
        at=at,
    )
    return True


def dismiss(
    tx: Tx, dispute: Dispute, *, actor: str, at: datetime, why: Mapping[str, object], run_id: str | None
) -> bool:
    """Settle a pending row as keep-both without touching a memory (self-healing); False if it was settled."""
    if not tx.settle_dispute(dispute.id, DisputeStatus.DISMISSED, {"keep_both": True, **why}, actor, at):
        return False
    ids = [dispute.memory_a] + ([dispute.memory_b] if dispute.memory_b else [])
    tx.add_audit(
        actor=actor,
        action="queue.dismiss",
        owner=dispute.owner,
        memory_ids=ids,
        payload={"dispute_id": dispute.id, **why},
        run_id=run_id,
        at=at,
    )
    return True


CHALLENGE = "challenge"  # the audit action of one session's challenge


def challenge(
    tx: Tx, memory: Memory, dispute_id: str, *, actor: str, at: datetime, payload: Mapping[str, object]
) -> None:
    """One session's challenge of a memory, recorded on the row it raised or joined (``dispute_id``)."""
    tx.add_audit(
        actor=actor,
        action=CHALLENGE,
        owner=memory.owner,
        memory_ids=[memory.id],
        payload={**payload, "dispute_id": dispute_id},
        run_id=None,
        at=at,
    )
