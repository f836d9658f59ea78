"""Re-examination's stamps: a subject seen whole, or stopped at its cap."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from zero_memory.domain.memory import Memory
from zero_memory.store.base import Tx


def examine(
    tx: Tx, subject: Memory, *, owner: str, model: str, at: datetime, run_id: str | None, payload: Mapping[str, object]
) -> None:
    """Stamp a subject the re-examination's model has seen whole, with its ``rescan.examine`` audit row."""
    tx.add_guard(subject.id, model, "complete", at)
    tx.add_audit(
        actor="hygiene.rescan",
        action="rescan.examine",
        owner=owner,
        memory_ids=[subject.id],
        payload={"model": model, **payload},
        run_id=run_id,
        at=at,
    )


def cap_stop(
    tx: Tx, subject: Memory, *, owner: str, at: datetime, run_id: str | None, payload: Mapping[str, object]
) -> None:
    """The re-examination stopped at its cap on ``subject``: the audit row says so (the subject stays unstamped)."""
    tx.add_audit(
        actor="hygiene.rescan",
        action="rescan.cap_stop",
        owner=owner,
        memory_ids=[subject.id],
        payload=dict(payload),
        run_id=run_id,
        at=at,
    )
