"""Scheduled system-wide cycles (``ZM_HYGIENE_SCAN_INTERVAL_HOURS``), in-process.

Time is cut into ticks of the interval. Every server process wakes at each
tick, but the tick's run has a fixed id, and only the process that inserts it
runs the cycles: with several processes on one database, each tick runs once.
Each owner's cycle takes that owner's lock and attributes its judgements to
the owner; then the tick rolls up old surfacings and usage events
(``retention.py``).
"""

from __future__ import annotations

from typing import Any

from zero_memory.app import App
from zero_memory.background import Loop
from zero_memory.hygiene import retention, runs
from zero_memory.hygiene.cycle import start_cycle
from zero_memory.hygiene.runs import Tally
from zero_memory.store import system_tx


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


def scheduler(app: App, interval_hours: float) -> Loop:
    """The loop that runs each tick's cycle once: it looks at the clock at the end of each tick, and at
    least every minute (a clock that jumps is seen within one)."""
    seconds = interval_hours * 3600
    last: int | None = None

    def step() -> None:
        nonlocal last
        tick = tick_of(app, interval_hours)
        if tick != last:
            last = tick
            run_tick(app, tick)

    def until_next_tick() -> float:
        assert last is not None  # the first step comes at once
        return max(0.05, min(60.0, (last + 1) * seconds - app.clock().timestamp()))

    return Loop("zm-scheduler", step, every=until_next_tick, first=0.0, failed="a scheduled hygiene tick")
