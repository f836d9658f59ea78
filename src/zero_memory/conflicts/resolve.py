"""Settling one dispute (hygiene.md §4).

A pair: ``keep_both``; ``winner`` (the other is invalidated, superseded by the
winner); ``forget`` one side; ``merge`` (a new memory with the composed text
supersedes both — rank 2 and human-authored when a person typed it on the
dashboard). A single-subject row: uphold (``keep_both`` or ``winner`` = its
memory) or ``retire`` (a reversible invalidation with no successor). Every
change is one transaction with its audit row, and every invalidation is
undone by ``restore_memory``.
"""

from __future__ import annotations

from typing import Any

from zero_memory import errors, transitions
from zero_memory.access.caller import Caller
from zero_memory.access.visibility import visibility
from zero_memory.app import App
from zero_memory.conflicts.models import Choice, Resolution
from zero_memory.conflicts.queue import visible_dispute
from zero_memory.domain.memory import AuthorKind, InvalidationReason, Memory, Rank, content_hash
from zero_memory.domain.records import Dispute, DisputeShape, DisputeStatus, Visibility
from zero_memory.ids import memory_id
from zero_memory.memory.validation import check_fields, check_text
from zero_memory.store.base import Tx


def resolve_conflict(app: App, caller: Caller, dispute_id: str, choice: Choice, *, human: bool = False) -> Resolution:
    """Settle a dispute. ``human``: the caller typed the merge text themselves (the dashboard)."""
    vector = None
    if choice.merge is not None:
        check_text("merge", choice.merge)
        check_fields({"merge": choice.merge})
        vector = app.embedder.embed([choice.merge])[0]
    with app.store.tx(write=True) as tx:
        vis = visibility(tx, caller.uid)
        dispute, memories = visible_dispute(tx, vis, dispute_id)
        return settle(app, tx, vis, caller, dispute, memories, choice, human=human, vector=vector)


def settle(
    app: App,
    tx: Tx,
    vis: Visibility,
    caller: Caller,
    dispute: Dispute,
    memories: dict[str, Memory],
    choice: Choice,
    *,
    human: bool = False,
    vector: Any = None,
) -> Resolution:
    if not dispute.pending:
        raise errors.conflict(f"dispute {dispute.id} is {dispute.status.value}", subcode=errors.ALREADY_RESOLVED)
    for memory in memories.values():
        if not vis.can_write(memory.scope):
            raise errors.validation(f"dispute_id: {memory.id} is in {memory.scope}, which is read-only for you")
    now = app.clock()
    actor = caller.uid
    invalidated: list[str] = []
    created: str | None = None
    if dispute.shape is DisputeShape.SINGLE:
        subject = memories[dispute.memory_a]
        if choice.retire:
            if subject.live:
                transitions.retire(
                    tx,
                    subject,
                    successor=None,
                    reason=InvalidationReason.RETIRED,
                    actor=actor,
                    action="retire",
                    at=now,
                    payload={"dispute_id": dispute.id},
                )
                invalidated.append(subject.id)
            resolution: dict[str, Any] = {"retire": True}
        elif choice.keep_both or choice.winner == subject.id:
            resolution = {"uphold": True}
        else:
            raise errors.validation("a single-subject dispute is settled by keep_both, winner (its memory) or retire")
    else:
        a, b = memories[dispute.memory_a], memories[dispute.memory_b or ""]
        if choice.retire:
            raise errors.validation("retire: settles single-subject disputes; for a pair choose winner or forget")
        if choice.keep_both:
            resolution = {"keep_both": True}
        elif choice.winner is not None or choice.forget is not None:
            target = choice.winner if choice.winner is not None else choice.forget
            if target not in (a.id, b.id):
                raise errors.validation("winner: must be one of the dispute's two memories")
            if choice.winner is not None:
                winner, loser = (a, b) if choice.winner == a.id else (b, a)
                if not winner.live:
                    raise errors.conflict(f"{winner.id} is not live; restore it first")
                reason = (
                    InvalidationReason.DUPLICATE if dispute.verdict == "duplicate" else InvalidationReason.SUPERSEDED
                )
                if loser.live:
                    transitions.retire(
                        tx,
                        loser,
                        successor=winner.id,
                        reason=reason,
                        actor=actor,
                        action="resolve.winner",
                        at=now,
                        payload={"dispute_id": dispute.id},
                    )
                    invalidated.append(loser.id)
                resolution = {"winner": winner.id}
            else:
                gone = a if choice.forget == a.id else b
                if gone.live:
                    transitions.retire(
                        tx,
                        gone,
                        successor=None,
                        reason=InvalidationReason.FORGOTTEN,
                        actor=actor,
                        action="forget",
                        at=now,
                        payload={"dispute_id": dispute.id},
                    )
                    invalidated.append(gone.id)
                resolution = {"forget": gone.id}
        else:
            assert choice.merge is not None and vector is not None
            created = _merge(app, tx, caller, a, b, choice.merge, vector, human=human, dispute=dispute)
            invalidated += [m.id for m in (a, b) if m.live]
            resolution = {"merge": created}
    tx.settle_dispute(dispute.id, DisputeStatus.RESOLVED, resolution, actor, now)
    ids = [dispute.memory_a] + ([dispute.memory_b] if dispute.memory_b else [])
    tx.add_audit(
        actor=actor,
        action="queue.resolve",
        owner=dispute.owner,
        memory_ids=ids,
        payload={"dispute_id": dispute.id, "verdict": dispute.verdict, **resolution},
        run_id=None,
        at=now,
    )
    return Resolution(
        dispute_id=dispute.id, status="resolved", resolution=resolution, invalidated=invalidated, created=created
    )


def _merge(
    app: App,
    tx: Tx,
    caller: Caller,
    a: Memory,
    b: Memory,
    text: str,
    vector: Any,
    *,
    human: bool,
    dispute: Dispute,
) -> str:
    """A new memory with the composed text, superseding both sides."""
    newer = max((a, b), key=lambda m: (m.created_at, m.id))
    now = app.clock()
    merged = Memory(
        id=memory_id(),
        owner=newer.owner,
        scope=newer.scope,
        kind=newer.kind,
        content=text,
        content_hash=content_hash(text),
        author_kind=AuthorKind.HUMAN if human else AuthorKind(caller.author_kind),
        agent_name="dashboard" if human else caller.client,
        rank=Rank.HUMAN if human else Rank.AGENT,
        source={"merged_from": f"{a.id},{b.id}"},
        created_at=now,
        updated_at=now,
    )
    tx.insert_memory(merged, vector, app.embedder.model_id)
    tx.add_audit(
        actor=caller.uid,
        action="merge",
        owner=merged.owner,
        memory_ids=[merged.id, a.id, b.id],
        payload={"dispute_id": dispute.id, "rank": int(merged.rank)},
        run_id=None,
        at=now,
    )
    for side in (a, b):
        if side.live:
            transitions.retire(
                tx,
                side,
                successor=merged.id,
                reason=InvalidationReason.MERGED,
                actor=caller.uid,
                action="merge.retire",
                at=now,
                payload={"dispute_id": dispute.id},
            )
    return merged.id
