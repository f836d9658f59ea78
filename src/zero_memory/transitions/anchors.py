"""Anchors re-pointed at the code they describe: followed after a change, or accepted as they are."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from zero_memory.domain.anchors import AnchorRecord
from zero_memory.store.base import Tx


def follow_anchor(
    tx: Tx,
    before: AnchorRecord,
    after: AnchorRecord,
    *,
    owner: str,
    actor: str,
    action: str,
    at: datetime,
    payload: Mapping[str, object],
    run_id: str | None,
) -> bool:
    """Re-point an anchor at where its code is now, with an audit row that keeps where it was (``payload``);
    False (and no row) when the anchor is gone meanwhile."""
    if not tx.update_anchor(before, after):
        return False
    tx.add_audit(
        actor=actor,
        action=action,
        owner=owner,
        memory_ids=[before.memory_id],
        payload=dict(payload),
        run_id=run_id,
        at=at,
    )
    return True


def accept_anchors(
    tx: Tx,
    memory_id: str,
    kept: Sequence[AnchorRecord],
    before: Sequence[Mapping[str, object]],
    *,
    owner: str,
    actor: str,
    at: datetime,
) -> None:
    """A person upheld a memory over its ``outdated`` row: its anchors become ``kept`` (re-anchored, the gone
    ones let go), with one ``anchor.accept`` audit row keeping what each was ``before``."""
    tx.set_anchors(memory_id, kept, at)
    tx.add_audit(
        actor=actor,
        action="anchor.accept",
        owner=owner,
        memory_ids=[memory_id],
        payload={"anchors": [dict(b) for b in before]},
        run_id=None,
        at=at,
    )
