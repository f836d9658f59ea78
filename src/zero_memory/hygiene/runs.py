"""Hygiene runs: ids, a stored summary, a heartbeat, and interruption.

A run's summary is its counts (docs/spec/tools.md ``scan_hygiene``). A run whose
process died stops beating; the next start marks it ``interrupted`` and the
next run does its work again (every step is idempotent).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from zero_memory import errors, transitions
from zero_memory.app import App
from zero_memory.domain.records import AuditEntry, Run, RunStatus
from zero_memory.ids import new_id
from zero_memory.store import system_tx
from zero_memory.store.base import Tx

COUNTS = (
    "subjects",
    "pairs_considered",
    "skipped_settled",
    "skipped_cross_project",
    "skipped_cached",
    "skipped_declared",
    "skipped_dead",
    "judged",
    "auto_resolved",
    "queued",
    "linked_complementary",
    "dismissed_stale",
    "dismissed_rejudge",
    "rescanned",
    "portability_proposed",
    "stale_suspects",
    "loops_closed",
    "failed_judgements",
)
HEARTBEAT_GRACE = timedelta(minutes=10)


@dataclass
class Tally:
    """The counts of one run, plus what it saw that a person may want to read."""

    counts: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)

    def add(self, name: str, n: int = 1) -> None:
        self.counts[name] += n

    def summary(self) -> dict[str, Any]:
        summary: dict[str, Any] = {name: self.counts.get(name, 0) for name in COUNTS}
        # Counts only some runs have (a scheduled tick's owners and retention), when they have them.
        summary.update({name: n for name, n in sorted(self.counts.items()) if name not in summary})
        if self.notes:
            summary["notes"] = self.notes[:20]
        return summary


def start(
    app: App, *, owner: str | None, kind: str, started_by: str, dry_run: bool, run_id: str | None = None
) -> Run | None:
    """Create a running run; None when ``run_id`` names a run someone already claimed."""
    now = app.clock()
    run = Run.running(run_id or new_id("run"), owner=owner, kind=kind, started_by=started_by, at=now, dry_run=dry_run)
    with system_tx(app.store, "hygiene", write=True) as tx:
        if not transitions.start_run(tx, run, at=now):
            return None
    return run


def beat(app: App, run: Run, tally: Tally) -> None:
    with system_tx(app.store, "hygiene", write=True) as tx:
        tx.touch_run(run.id, tally.summary(), app.clock())


def finish(app: App, run: Run, tally: Tally, status: RunStatus = RunStatus.COMPLETED) -> dict[str, Any]:
    summary = tally.summary()
    now = app.clock()
    with system_tx(app.store, "hygiene", write=True) as tx:
        transitions.finish_run(tx, run, status, summary, at=now)
    return summary


def lock_name(run_id: str) -> str:
    """The lock a running run holds for its whole life; it dies with its process."""
    return f"run:{run_id}"


def interrupt_orphans(app: App) -> list[str]:
    """Mark running runs whose process is gone as interrupted; return their ids.

    A live run holds its lock; a run whose lock can be taken has no process
    left (killed, crashed). Runs that stopped beating long ago are orphans too.
    """
    now = app.clock()
    with system_tx(app.store, "hygiene") as tx:
        running = tx.runs_with_status(RunStatus.RUNNING)
    orphans = []
    for run in running:
        with app.store.advisory_lock(lock_name(run.id)) as taken:
            if taken:
                orphans.append(run.id)
    with system_tx(app.store, "hygiene", write=True) as tx:
        stale = tx.interrupt_runs(heartbeat_before=now - HEARTBEAT_GRACE, at=now)
        for run_id in orphans:
            tx.finish_run(run_id, RunStatus.INTERRUPTED, _summary_of(tx, run_id), now)
        for run_id in sorted(set(orphans) | set(stale)):
            tx.add_audit(
                actor="hygiene", action="run.interrupted", owner=None, memory_ids=[], payload={}, run_id=run_id, at=now
            )
    return sorted(set(orphans) | set(stale))


def _summary_of(tx: Tx, run_id: str) -> dict[str, Any]:
    run = tx.get_run(run_id)
    return dict(run.summary) if run else {}


# -- reading runs, for the edges (zm hygiene, the dashboard's Runs page) --------------------------------------


def get_run(app: App, run_id: str) -> Run | None:
    """Any run, for an operator's command."""
    with system_tx(app.store, "operator") as tx:
        return tx.get_run(run_id)


def all_runs(app: App, *, limit: int) -> list[Run]:
    """Every user's newest runs, for an operator's command."""
    with system_tx(app.store, "operator") as tx:
        return tx.list_runs(limit=limit)


def runs_of(
    app: App,
    uid: str,
    *,
    limit: int,
    kinds: Collection[str] | None = None,
    not_kinds: Collection[str] | None = None,
) -> list[Run]:
    """A user's newest runs, of ``kinds`` or of any kind but ``not_kinds``."""
    with app.store.tx() as tx:
        tx.act_as(uid)
        return tx.list_runs(owner=uid, limit=limit, kinds=kinds, not_kinds=not_kinds)


def run_of(app: App, uid: str, run_id: str) -> tuple[Run, list[AuditEntry]]:
    """A user's run and its audit rows; ``not_found`` for anyone else's."""
    with app.store.tx() as tx:
        tx.act_as(uid)
        run = tx.get_run(run_id)
        if run is None or run.owner != uid:
            raise errors.not_found(f"run {run_id[:80]}")
        return run, tx.audit_for_run(run.id)
