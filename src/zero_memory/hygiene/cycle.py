"""The full cycle (docs/spec/hygiene.md §5) and the narrow write-time scan.

A full cycle over one owner's memories = pair scan of recent memories +
stale sweep + (on demand) the re-judge pass + judge re-examination +
portability audit + stale-suspect detection + loop closure. One cycle per owner at a time:
a cycle holds the owner's lock and its run's lock for its whole life. A write-triggered scan
is a run of its own too (kind ``on_write``), small, holding only its run's lock: every
automatic action belongs to a run that ``zm hygiene undo`` can find.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from zero_memory.app import App
from zero_memory.domain.memory import Memory
from zero_memory.domain.records import Run, RunStatus
from zero_memory.hygiene import loop_closure, portability, reexamine, runs, suspects
from zero_memory.hygiene.candidates import neighbours, pairs, recent_subjects
from zero_memory.hygiene.runs import Tally
from zero_memory.hygiene.scan import ScanOptions, scan_pairs
from zero_memory.hygiene.self_healing import rejudge, stale_sweep
from zero_memory.judge.question import Purpose
from zero_memory.store import system_tx

log = logging.getLogger(__name__)

ON_WRITE = "on_write"  # the kind of a write-triggered scan's run

Step = Callable[[App, str, Tally, str | None, bool], None]


def owner_lock(owner: str) -> str:
    return f"hygiene:{owner}"


def pair_scan(app: App, owner: str, tally: Tally, run_id: str | None, dry_run: bool) -> None:
    config = app.settings.hygiene
    since = app.clock() - timedelta(days=config.lookback_days)
    with system_tx(app.store, "hygiene") as tx:
        subjects = recent_subjects(tx, owner, since)
        tally.add("subjects", len(subjects))
        candidates = list(pairs(tx, subjects, floor=config.sweep_similarity, limit=config.sweep_max_candidates))
    scan_pairs(app, owner, candidates, tally, ScanOptions(dry_run=dry_run), run_id)


def _stale_sweep(app: App, owner: str, tally: Tally, run_id: str | None, dry_run: bool) -> None:
    stale_sweep(app, owner, tally, run_id, dry_run=dry_run)


def _rejudge(app: App, owner: str, tally: Tally, run_id: str | None, dry_run: bool) -> None:
    rejudge(app, owner, tally, run_id, dry_run=dry_run)


def steps(rejudge: bool) -> list[Step]:
    chosen: list[Step] = [pair_scan, _stale_sweep]
    if rejudge:
        chosen.append(_rejudge)
    chosen += [reexamine.step, portability.step, suspects.step, loop_closure.step]
    return chosen


def run_cycle(app: App, owner: str, run: Run, *, rejudge: bool = False) -> dict[str, Any]:
    """Run every step of a full cycle for one owner under its locks; return the summary."""
    tally = Tally()
    with app.store.advisory_lock(runs.lock_name(run.id)), app.store.advisory_lock(owner_lock(owner)) as taken:
        if not taken:
            tally.notes.append("another cycle of this owner was running; nothing done")
            return runs.finish(app, run, tally, RunStatus.COMPLETED)
        try:
            for step in steps(rejudge):
                step(app, owner, tally, run.id, run.dry_run)
                runs.beat(app, run, tally)
        except Exception:
            log.exception("hygiene run %s failed", run.id)
            tally.notes.append("the run failed; see the server log")
            return runs.finish(app, run, tally, RunStatus.FAILED)
    return runs.finish(app, run, tally)


def start_cycle(
    app: App,
    owner: str,
    *,
    started_by: str,
    dry_run: bool = False,
    rejudge: bool = False,
    wait: bool = False,
    kind: str = "scan",
) -> tuple[Run, dict[str, Any] | None]:
    """Start a full cycle; with ``wait`` run it here and return its summary, else run it in the background."""
    run = runs.start(app, owner=owner, kind=kind, started_by=started_by, dry_run=dry_run)
    assert run is not None
    if wait:
        return run, run_cycle(app, owner, run, rejudge=rejudge)
    app.background(lambda: run_cycle(app, owner, run, rejudge=rejudge))
    return run, None


def scan_written(app: App, memory: Memory) -> str | None:
    """The write trigger: one new memory against its neighbours, pair scan only, as a run of kind ``on_write``.

    Its automatic actions carry the run's id, so ``zm hygiene undo RUN`` finds them like a cycle's. A
    write with no neighbour above the floor has nothing to judge and starts no run. Returns the run's id.
    """
    config = app.settings.hygiene
    with system_tx(app.store, "hygiene") as tx:
        candidates = neighbours(tx, memory, floor=config.sweep_similarity, limit=config.sweep_max_candidates)
    if not candidates:
        return None
    run = runs.start(app, owner=memory.owner, kind=ON_WRITE, started_by=memory.owner, dry_run=False)
    assert run is not None
    tally = Tally()
    tally.add("subjects")
    options = ScanOptions(purpose=Purpose.SCAN, origin="write")
    with app.store.advisory_lock(runs.lock_name(run.id)):
        try:
            scan_pairs(app, memory.owner, candidates, tally, options, run.id)
        except Exception:
            log.exception("hygiene run %s (on write) failed", run.id)
            tally.notes.append("the run failed; see the server log")
            runs.finish(app, run, tally, RunStatus.FAILED)
            return run.id
    runs.finish(app, run, tally)
    return run.id


def on_write(app: App) -> Callable[[Memory], None]:
    """The ``after_write`` hook of ``ZM_HYGIENE_ON_WRITE``: scans in the background, never delaying the answer."""

    def trigger(memory: Memory) -> None:
        app.background(lambda: scan_written(app, memory))

    return trigger
