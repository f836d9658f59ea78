"""The background services a server process runs beside its requests, chosen by name, started and stopped
in one place.

A process declares what it runs (``Services``); ``running`` starts those for as long as the process serves:

- ``orphans``: runs a stopped process left marked running are marked interrupted (``hygiene/runs.py``);
- ``scheduler``: the scheduled hygiene ticks, when ``ZM_HYGIENE_SCAN_INTERVAL_HOURS`` is set
  (``hygiene/scheduler.py``);
- ``capture``: retries of failed extractions and chunks a stopped process left behind (``capture/worker.py``);
- ``telemetry``: usage events and surfacings written in batches, the last at shutdown (``telemetry.py``).

Each is one ``background.Loop``; they stop in the reverse of their start.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from zero_memory.app import App
from zero_memory.capture.worker import capture_worker
from zero_memory.hygiene import runs
from zero_memory.hygiene.scheduler import scheduler


@dataclass(frozen=True)
class Services:
    orphans: bool = False
    scheduler: bool = False
    capture: bool = False
    telemetry: bool = False


HTTP = Services(orphans=True, scheduler=True, capture=True, telemetry=True)
"""``zm serve`` (worker 0 of ``--workers N``): everything."""
HTTP_SIBLING = Services(orphans=True, telemetry=True)
"""Workers 1 and up of ``zm serve --workers N``: the scheduler and the capture retries run once, in worker 0."""
STDIO = Services(capture=True)
"""``zm mcp``: one client's process, its telemetry written as it comes; the scheduler is the HTTP server's."""


@contextlib.contextmanager
def running(app: App, services: Services) -> Iterator[None]:
    """The chosen services, from now until the block ends."""
    if services.orphans:
        runs.interrupt_orphans(app)
    stops: list[Callable[[], None]] = []
    try:
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
        yield
    finally:
        for stop in reversed(stops):
            stop()
