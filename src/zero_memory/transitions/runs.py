"""The runs automatic actions name: started, finished, and the links an undo removes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from zero_memory.domain.records import Run, RunStatus
from zero_memory.store.base import Tx


def start_run(tx: Tx, run: Run, *, at: datetime) -> bool:
    """Claim a run and audit its start; False when someone claimed its id already."""
    if not tx.claim_run(run):
        return False
    tx.add_audit(
        actor=f"hygiene.{run.kind}",
        action="run.start",
        owner=run.owner,
        memory_ids=[],
        payload={"started_by": run.started_by, "dry_run": run.dry_run},
        run_id=run.id,
        at=at,
    )
    return True


def finish_run(tx: Tx, run: Run, status: RunStatus, summary: Mapping[str, Any], *, at: datetime) -> None:
    """Record how a run ended, with its summary, and audit its stop (the counts that are not zero)."""
    tx.finish_run(run.id, status, dict(summary), at)
    tx.add_audit(
        actor=f"hygiene.{run.kind}",
        action="run.stop",
        owner=run.owner,
        memory_ids=[],
        payload={"status": status.value, **{k: v for k, v in summary.items() if v}},
        run_id=run.id,
        at=at,
    )


def undo_links(tx: Tx, run: Run, *, actor: str, at: datetime, restored: Sequence[str], anchors_moved_back: int) -> int:
    """End an undo of a run: remove the ``relates_to`` links the run added, and audit the whole undo (what
    ``restore`` brought back, the links removed, the anchors put back); the number of links removed."""
    links = [lk for lk in tx.links_of_run(run.id) if lk.type == "relates_to"]
    for lk in links:
        tx.remove_link(lk.id, at)
    tx.add_audit(
        actor=actor,
        action="run.undo",
        owner=run.owner,
        memory_ids=list(restored),
        payload={"restored": len(restored), "unlinked": len(links), "anchors_moved_back": anchors_moved_back},
        run_id=run.id,
        at=at,
    )
    return len(links)
