"""Reading the review queue: rows the caller may see, with both memories inline.

A row is visible when every memory it names is in the caller's visible
scopes; any other id answers exactly as a missing one.
"""

from __future__ import annotations

from zero_memory import errors
from zero_memory.access.caller import Caller
from zero_memory.access.visibility import visibility
from zero_memory.app import App
from zero_memory.clock import to_text
from zero_memory.conflicts.models import Conflict, ConflictList, ConflictMemory, Proposal
from zero_memory.domain.memory import Memory, age_days
from zero_memory.domain.records import Dispute, DisputeShape, DisputeStatus, Visibility
from zero_memory.store.base import Tx
from zero_memory.store.ports.review import DisputeQuery

MAX_LIMIT = 100
SHAPES = ("pair", "single")


def memory_view(memory: Memory, app: App) -> ConflictMemory:
    return ConflictMemory(
        id=memory.id,
        content=memory.content,
        kind=memory.kind,
        scope=memory.scope,
        rank=int(memory.rank),
        age_days=round(age_days(memory.created_at, app.clock()), 3),
        author_kind=memory.author_kind.value,
        agent_name=memory.agent_name,
        status=memory.status.value,
        restored=memory.restored,
    )


def conflict_view(dispute: Dispute, memories: dict[str, Memory], app: App) -> Conflict:
    b = memories.get(dispute.memory_b) if dispute.memory_b else None
    return Conflict(
        id=dispute.id,
        shape=dispute.shape.value,
        verdict=dispute.verdict,
        direction=dispute.direction,
        confidence=dispute.confidence,
        rationale=dispute.rationale,
        model=dispute.model,
        origin=dispute.origin,
        status=dispute.status.value,
        created_at=to_text(dispute.created_at),
        reason=dispute.reason,
        memory_a=memory_view(memories[dispute.memory_a], app),
        memory_b=memory_view(b, app) if b else None,
        resolution=dispute.resolution or None,
        proposal=Proposal.model_validate(dispute.proposal) if dispute.proposal else None,
    )


def visible_dispute(tx: Tx, vis: Visibility, dispute_id: str) -> tuple[Dispute, dict[str, Memory]]:
    dispute = tx.get_dispute(dispute_id) if isinstance(dispute_id, str) and dispute_id else None
    if dispute is not None:
        ids = [dispute.memory_a] + ([dispute.memory_b] if dispute.memory_b else [])
        memories = tx.get_memories(ids, vis)
        if len(memories) == len(ids):
            return dispute, memories
    raise errors.not_found(f"dispute {str(dispute_id)[:80]}")


def list_conflicts(
    app: App,
    caller: Caller,
    *,
    status: str | None = "pending",
    verdict: str | None = None,
    shape: str | None = None,
    origin: str | None = None,
    limit: int = 20,
    cursor: str | None = None,
) -> ConflictList:
    if status not in (None, *DisputeStatus.__members__.values()):
        raise errors.validation("status: expected pending, resolved or dismissed")
    if shape not in (None, *SHAPES):
        raise errors.validation("shape: expected pair or single")
    if not 1 <= limit <= MAX_LIMIT:
        raise errors.validation(f"limit: must be between 1 and {MAX_LIMIT}")
    with app.store.tx() as tx:
        vis = visibility(tx, caller.uid)
        query = DisputeQuery(
            scopes=vis.readable,
            status=DisputeStatus(status) if status else None,
            verdict=verdict,
            shape=shape,
            origin=origin,
            limit=limit + 1,
            after=cursor,
        )
        rows = tx.list_disputes(query)
        pending = tx.count_disputes(DisputeQuery(scopes=vis.readable))
        page, more = rows[:limit], len(rows) > limit
        ids = [i for d in page for i in (d.memory_a, d.memory_b) if i]
        memories = tx.get_memories(ids, vis)
    return ConflictList(
        conflicts=[conflict_view(d, memories, app) for d in page],
        pending_count=pending,
        next_cursor=page[-1].id if more and page else None,
    )


def get_conflict(app: App, caller: Caller, dispute_id: str) -> Conflict:
    with app.store.tx() as tx:
        vis = visibility(tx, caller.uid)
        dispute, memories = visible_dispute(tx, vis, dispute_id)
    return conflict_view(dispute, memories, app)


def pending_count(app: App, caller: Caller) -> int:
    with app.store.tx() as tx:
        return tx.count_disputes(DisputeQuery(scopes=visibility(tx, caller.uid).readable))


__all__ = ["DisputeShape", "get_conflict", "list_conflicts", "pending_count"]
