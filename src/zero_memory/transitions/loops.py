"""Open loops closed, by a person or an agent, or automatically when the guard lets it."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from zero_memory.domain.memory import InvalidationReason, Memory
from zero_memory.store.base import Tx
from zero_memory.transitions.memories import link, retire
from zero_memory.transitions.queue import hold


def close_loop(
    tx: Tx,
    loop: Memory,
    *,
    actor: str,
    at: datetime,
    note: str | None = None,
    run_id: str | None = None,
    evidence: Memory | None = None,
    payload: Mapping[str, object] | None = None,
) -> None:
    """Close an open task or question: an invalidation with reason ``closed``, reopened by ``restore``.

    ``evidence`` (the loop-closure stage): the memory that shows it closed, linked ``relates_to`` the loop
    in the same run, so undoing the run removes the link with the closure.
    """
    retire(
        tx,
        loop,
        successor=None,
        reason=InvalidationReason.CLOSED,
        actor=actor,
        action="close_loop",
        at=at,
        payload={
            **({"note": note} if note else {}),
            **({"evidence": evidence.id} if evidence else {}),
            **(payload or {}),
        }
        or None,
        run_id=run_id,
    )
    if evidence is not None:
        link(tx, evidence, loop, "relates_to", actor=actor, at=at, action="loop_closure.link", run_id=run_id)


def close_loop_automatically(
    tx: Tx,
    loop: Memory,
    *,
    actor: str,
    at: datetime,
    evidence: Memory,
    run_id: str | None,
    payload: Mapping[str, object] | None = None,
) -> bool:
    """``close_loop`` by the loop-closure stage: False when the guard holds it back. Nothing is queued: the
    loop stays open, as whoever reopened it (or the person deciding its row) left it."""
    if hold(tx, loop, None, actor=actor, at=at):
        return False
    close_loop(tx, loop, actor=actor, at=at, run_id=run_id, evidence=evidence, payload=payload)
    return True
