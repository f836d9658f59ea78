"""A memory's own states: created, retired and restored, moved, linked, pinned, reaffirmed, and a write that stored
nothing new.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

import numpy as np

from zero_memory.domain.memory import InvalidationReason, Memory, Status
from zero_memory.domain.records import Link
from zero_memory.ids import new_id
from zero_memory.store.base import Tx


def create(
    tx: Tx,
    memory: Memory,
    vector: np.ndarray,
    model: str,
    *,
    actor: str,
    action: str,
    at: datetime,
    payload: Mapping[str, object] | None = None,
    related: Sequence[str] = (),
) -> None:
    """Insert a new memory with its vector, and the audit row that created it (the new id first, then ``related``)."""
    tx.insert_memory(memory, vector, model)
    tx.add_audit(
        actor=actor,
        action=action,
        owner=memory.owner,
        memory_ids=[memory.id, *related],
        payload=dict(payload or {}),
        run_id=None,
        at=at,
    )


def retire(
    tx: Tx,
    old: Memory,
    *,
    successor: str | None,
    reason: InvalidationReason,
    actor: str,
    action: str,
    at: datetime,
    payload: Mapping[str, object] | None = None,
    run_id: str | None = None,
) -> None:
    """Invalidate a memory, link its successor, and audit it: one reversible step."""
    tx.set_status(old.id, Status.INVALIDATED, reason, successor, at)
    if successor is not None:
        tx.add_link(Link(new_id("lnk"), successor, old.id, "supersedes", at, actor, run_id))
    ids = [old.id] if successor is None else [successor, old.id]
    tx.add_audit(
        actor=actor,
        action=action,
        owner=old.owner,
        memory_ids=ids,
        payload={"reason": reason.value, "successor": successor, **(payload or {})},
        run_id=run_id,
        at=at,
    )


def restore(
    tx: Tx,
    memory: Memory,
    *,
    actor: str,
    at: datetime,
    run_id: str | None = None,
    payload: Mapping[str, object] | None = None,
) -> list[str]:
    """Clear an invalidation and the supersede links pointing at it; return the removed links' sources.

    The memory is marked restored for good: someone (a person, an agent, an undo) judged its
    invalidation false, so automation may queue it from now on but never invalidate it again.
    """
    tx.set_status(memory.id, Status.LIVE, None, None, at)
    tx.mark_restored(memory.id, at)
    removed = tx.remove_links(dst=memory.id, link_type="supersedes", at=at)
    tx.add_audit(
        actor=actor,
        action="restore",
        owner=memory.owner,
        memory_ids=[memory.id],
        payload={
            "was": memory.invalidated_reason.value if memory.invalidated_reason else None,
            "superseded_by": memory.superseded_by,
            "removed_links": [link.src for link in removed],
            **(payload or {}),
        },
        run_id=run_id,
        at=at,
    )
    return [link.src for link in removed]


def move(
    tx: Tx, memory: Memory, target: str, *, actor: str, at: datetime, payload: Mapping[str, object] | None = None
) -> None:
    """Give a memory another scope; its first scope stays on record as ``original_scope``."""
    tx.set_scope(memory.id, target, memory.original_scope or memory.scope, at)
    tx.add_audit(
        actor=actor,
        action="move",
        owner=memory.owner,
        memory_ids=[memory.id],
        payload={"from": memory.scope, "to": target, **(payload or {})},
        run_id=None,
        at=at,
    )


def link(
    tx: Tx,
    src: Memory,
    dst: Memory,
    link_type: str,
    *,
    actor: str,
    at: datetime,
    action: str = "link",
    payload: Mapping[str, object] | None = None,
    run_id: str | None = None,
) -> bool:
    """Add a link between two memories unless it exists; False when it did."""
    if tx.has_link(src.id, dst.id, link_type):
        return False
    tx.add_link(Link(new_id("lnk"), src.id, dst.id, link_type, at, actor, run_id))
    tx.add_audit(
        actor=actor,
        action=action,
        owner=src.owner,
        memory_ids=[src.id, dst.id],
        payload={"type": link_type, **(payload or {})},
        run_id=run_id,
        at=at,
    )
    return True


def pin(tx: Tx, memory: Memory, *, actor: str, at: datetime) -> bool:
    """Make a memory a standing rule that leads every briefing; False when it was pinned already."""
    if not tx.add_pin(memory.id, actor, at):
        return False
    tx.add_audit(actor=actor, action="pin", owner=memory.owner, memory_ids=[memory.id], payload={}, run_id=None, at=at)
    return True


def unpin(tx: Tx, memory: Memory, *, actor: str, at: datetime) -> bool:
    """Take a memory out of the standing rules; False when it was not pinned."""
    if not tx.remove_pin(memory.id):
        return False
    tx.add_audit(
        actor=actor, action="unpin", owner=memory.owner, memory_ids=[memory.id], payload={}, run_id=None, at=at
    )
    return True


REAFFIRM = "reaffirm"  # the audit action of a person vouching for a core fact


def reaffirm(tx: Tx, memory: Memory, *, actor: str, at: datetime, payload: Mapping[str, object]) -> None:
    """A person vouches that a core fact or reference still holds: its freshness budget starts again at ``at``."""
    tx.add_audit(
        actor=actor,
        action=REAFFIRM,
        owner=memory.owner,
        memory_ids=[memory.id],
        payload=dict(payload),
        run_id=None,
        at=at,
    )


def remember_existing(
    tx: Tx, kept: Memory, status: str, *, actor: str, at: datetime, payload: Mapping[str, object]
) -> None:
    """A write that stored nothing new: ``status`` is ``absorbed`` (``kept`` says it already) or ``yielded``
    (``kept`` outranks it); the audit row on the memory kept is the whole step."""
    tx.add_audit(
        actor=actor,
        action=f"remember.{status}",
        owner=actor,
        memory_ids=[kept.id],
        payload=dict(payload),
        run_id=None,
        at=at,
    )
