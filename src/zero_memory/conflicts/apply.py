"""Carrying out a settlement plan in the caller's write transaction, every step a transition with its audit row.

The order is the one the audit trail tells: the merged memory is created
before the retirements that name it as successor, and the row is settled
last, so its ``queue.resolve`` row follows what the settlement did. Every
invalidation here is undone by ``restore_memory``.
"""

from __future__ import annotations

import numpy as np

from zero_memory import errors, transitions
from zero_memory.conflicts.models import Resolution
from zero_memory.conflicts.plan import Plan
from zero_memory.memory import anchoring
from zero_memory.memory.verification import OUTDATED
from zero_memory.store.base import Tx


def apply(tx: Tx, plan: Plan, *, vector: np.ndarray | None = None, model: str = "") -> Resolution:
    """Make the plan's changes; ``vector`` and ``model`` embed the merged memory when there is one."""
    dispute = plan.dispute
    if plan.merged is not None:
        assert vector is not None, "a merge is embedded before its transaction"
        sides = [dispute.memory_a, dispute.memory_b or ""]
        transitions.create(
            tx,
            plan.merged,
            vector,
            model,
            actor=plan.actor,
            action="merge",
            at=plan.at,
            payload={"dispute_id": dispute.id, "rank": int(plan.merged.rank)},
            related=sides,
        )
    for retirement in plan.retirements:
        transitions.retire(
            tx,
            retirement.memory,
            successor=retirement.successor,
            reason=retirement.reason,
            actor=plan.actor,
            action=retirement.action,
            at=plan.at,
            payload={"dispute_id": dispute.id},
        )
    settled_by = {"settled_by": plan.settled_by}
    if not transitions.resolve_dispute(tx, dispute, plan.resolution, actor=plan.actor, at=plan.at, payload=settled_by):
        # Another writer settled the row since it was read (PostgreSQL runs writers side by side): raising
        # rolls back this transaction, so the row is settled once, by whoever got there first.
        current = tx.get_dispute(dispute.id)
        status = current.status.value if current else "gone"
        raise errors.conflict(f"dispute {dispute.id} is {status}", subcode=errors.ALREADY_RESOLVED)
    if dispute.verdict == OUTDATED and not plan.retirements:
        # Upheld: the memory holds for the code as it is now, so its anchors follow that code.
        anchoring.accept_current(tx, dispute.memory_a, actor=plan.actor, owner=dispute.owner, at=plan.at)
    return Resolution(
        dispute_id=dispute.id,
        status="resolved",
        resolution=plan.resolution,
        invalidated=plan.invalidated,
        created=plan.merged.id if plan.merged else None,
    )
