"""Portability: a memory proposed for core, and the proposal settled."""

from __future__ import annotations

from datetime import datetime

from zero_memory.domain.memory import Memory
from zero_memory.domain.records import PortabilityCandidate
from zero_memory.store.base import Tx
from zero_memory.transitions.memories import move


def propose_portability(
    tx: Tx, candidate: PortabilityCandidate, *, portable: bool, actor: str = "hygiene.portability"
) -> bool:
    """File a portability candidacy (pending: a proposal to move the memory to core; closed: never asked
    again) with its audit row; False when the memory was a candidate already."""
    if not tx.add_portability(candidate):
        return False
    tx.add_audit(
        actor=actor,
        action="portability.propose" if candidate.status == "pending" else "portability.close",
        owner=candidate.owner,
        memory_ids=[candidate.memory_id],
        payload={
            "candidate_id": candidate.id,
            "confidence": candidate.confidence,
            "rationale": candidate.rationale,
            "portable": portable,
        },
        run_id=candidate.run_id,
        at=candidate.created_at,
    )
    return True


def settle_portability(
    tx: Tx, candidate: PortabilityCandidate, memory: Memory, *, target: str | None, actor: str, at: datetime
) -> None:
    """Settle a pending proposal as its owner decided: approved (``target``: the memory ``move``s there) or
    dismissed (None), with its audit row."""
    if target is not None:
        move(tx, memory, target, actor=actor, at=at, payload={"portability": candidate.id})
    tx.settle_portability(candidate.id, "approved" if target is not None else "dismissed", actor, at)
    tx.add_audit(
        actor=actor,
        action="portability.approve" if target is not None else "portability.dismiss",
        owner=memory.owner,
        memory_ids=[memory.id],
        payload={"candidate_id": candidate.id},
        run_id=None,
        at=at,
    )
