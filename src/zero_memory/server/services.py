"""The background services a server process runs beside its requests, chosen by name, started and stopped
in one place.

A process declares what it runs (``Services``); ``running`` starts those for as long as the process serves:

- ``orphans``: runs a stopped process left marked running are marked interrupted (``hygiene/runs.py``);
- ``scheduler``: the scheduled hygiene ticks, when ``ZM_HYGIENE_SCAN_INTERVAL_HOURS`` is set
  (``hygiene/scheduler.py``);
- ``capture``: retries of failed extractions and chunks a stopped process left behind (``capture/worker.py``);
- ``telemetry``: usage events and surfacings written in batches, the last at shutdown (``telemetry.py``);
- ``warm``: the model, the secret guard and the vector index loaded at once, not at the first call, and the
  index kept caught up with other processes' writes from then on (``server/warm.py``);
- ``query_process``: after the warm-up, on SQLite, the process recall's queries are embedded in
  (``embedding/query_process.py``).

Each is one ``background.Loop``, but for the warm-up's first pass, a thread of its own; they stop in the
reverse of their start.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from zero_memory.app import App
from zero_memory.capture.worker import capture_worker
from zero_memory.hygiene import runs
from zero_memory.hygiene.scheduler import scheduler
from zero_memory.server.warm import QUERY_PROCESS, STEPS, WarmUp, follower


@dataclass(frozen=True)
class Services:
    orphans: bool = False
    scheduler: bool = False
    capture: bool = False
    telemetry: bool = False
    warm: bool = False
    query_process: bool = False


HTTP = Services(orphans=True, scheduler=True, capture=True, telemetry=True, warm=True, query_process=True)
"""``zm serve`` (worker 0 of ``--workers N``): everything."""
HTTP_SIBLING = Services(orphans=True, telemetry=True, warm=True, query_process=True)
"""Workers 1 and up of ``zm serve --workers N``: the scheduler and the capture retries run once, in worker 0."""
STDIO = Services(capture=True, warm=True)
"""``zm mcp``: one client's process, its telemetry written as it comes; the scheduler is the HTTP server's."""


@dataclass(frozen=True)
class Running:
    """What the running services tell about the process: ``warm`` is None when it does not warm up."""

    warm: WarmUp | None = None


@contextlib.contextmanager
def running(app: App, services: Services) -> Iterator[Running]:
    """The chosen services, from now until the block ends."""
    if services.orphans:
        runs.interrupt_orphans(app)
    stops: list[Callable[[], None]] = []
    warm: WarmUp | None = None
    try:
        if services.warm:
            warm = WarmUp(app, (*STEPS, QUERY_PROCESS) if services.query_process else STEPS)
            warm.start()
            stops.append(warm.stop)
            following = follower(app)
            following.start()
            stops.append(following.stop)
        if services.scheduler and app.settings.scan_interval_hours:
            ticks = scheduler(app, app.settings.scan_interval_hours)
            ticks.start()
            stops.append(ticks.stop)
        if services.capture:
            retries = capture_worker(app)
            retries.start()
            stops.append(retries.stop)
        if services.telemetry:
            app.telemetry.start()
            stops.append(app.telemetry.stop)
        yield Running(warm)
    finally:
        for stop in reversed(stops):
            stop()
