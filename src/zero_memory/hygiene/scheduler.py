"""Scheduled system-wide cycles (``ZM_HYGIENE_SCAN_INTERVAL_HOURS``), in-process.

Time is cut into ticks of the interval. Every server process wakes at each
tick, but the tick's run has a fixed id, and only the process that inserts it
runs the cycles: with several processes on one database, each tick runs once.
Each owner's cycle takes that owner's lock and attributes its judgements to
the owner; then the tick rolls up old surfacings and usage events
(``retention.py``).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from zero_memory.app import App
from zero_memory.hygiene import retention, runs
from zero_memory.hygiene.cycle import start_cycle
from zero_memory.hygiene.runs import Tally
from zero_memory.store import system_tx

log = logging.getLogger(__name__)


def tick_of(app: App, interval_hours: float) -> int:
    return int(app.clock().timestamp() // (interval_hours * 3600))


def run_tick(app: App, tick: int) -> dict[str, Any] | None:
    """Run the system-wide cycle of one tick, unless another process has claimed it."""
    run_id = f"run_tick_{tick}"
    # Take the tick's run lock before claiming it, so a process starting meanwhile never sees the
    # claimed run without its lock and takes it for an orphan.
    with app.store.advisory_lock(runs.lock_name(run_id)) as locked:
        if not locked:
            return None
        parent = runs.start(app, owner=None, kind="scheduled", started_by="scheduler", dry_run=False, run_id=run_id)
        if parent is None:
            return None
        tally = Tally()
        with system_tx(app.store, "hygiene") as tx:
            owners = [u.id for u in tx.list_users()]
        for owner in owners:
            run, summary = start_cycle(app, owner, started_by="scheduler", wait=True, kind="scheduled")
            tally.add("owners")
            for name, value in (summary or {}).items():
                if isinstance(value, int):
                    tally.add(name, value)
            tally.notes.append(f"{owner}: {run.id}")
        kept = retention.roll_up(app, actor="scheduler", run_id=parent.id)
        tally.add("surfacings_rolled_up", kept.surfacings)
        tally.add("usage_events_rolled_up", kept.usage_events)
        return runs.finish(app, parent, tally)


class Scheduler:
    """A daemon thread that runs each tick's cycle; ``stop`` ends it between ticks."""

    def __init__(self, app: App, interval_hours: float) -> None:
        self.app = app
        self.interval_hours = interval_hours
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="zm-scheduler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _loop(self) -> None:
        seconds = self.interval_hours * 3600
        last = None
        while not self._stop.is_set():
            tick = tick_of(self.app, self.interval_hours)
            if tick != last:
                last = tick
                try:
                    run_tick(self.app, tick)
                except Exception:
                    log.exception("scheduled hygiene tick %s failed", tick)
            now = self.app.clock().timestamp()
            self._stop.wait(max(0.05, min(60.0, (tick + 1) * seconds - now)))
