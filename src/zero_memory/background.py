"""The one background-thread loop: a daemon thread that runs a step, waits, and runs it again until stopped.

The server's background services are each a step and a wait (``server/services.py`` starts them): the
scheduled hygiene tick (``hygiene/scheduler.py``), the capture retries (``capture/worker.py``) and the
telemetry flusher (``telemetry.py``), the index follower (``server/warm.py``). A step that raises is
logged and the loop goes on, waiting longer after each failure in a row (``backoff``): a store that stays
unreachable is tried less and less often and fills no log, one that comes back is used again within a
minute. ``wake`` cuts the current wait short (telemetry, once enough rows wait); ``stop`` ends the loop at
its next wait, never in the middle of a step.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger("zero_memory.background")

STOP_TIMEOUT_S = 10.0
# After failures in a row the interval doubles each time, up to this (or the loop's own interval, if longer).
BACKOFF_MAX_S = 60.0


def backoff(every: float, failures: int) -> float:
    """The wait before the next step after ``failures`` failed steps in a row (0: the last one succeeded)."""
    if failures == 0:
        return every
    return min(every * 2.0 ** min(failures, 32), max(every, BACKOFF_MAX_S))


def worth_logging(failures: int) -> bool:
    """Whether the ``failures``-th failure in a row is logged: the 1st, 2nd, 4th, 8th... (with the back-off, a
    step that fails for a day is tried about 1,440 times and logged 11 times)."""
    return failures & (failures - 1) == 0


class Loop:
    """``step`` on a daemon thread named ``name``, first after ``first`` seconds (default ``every``), then
    after ``every`` seconds (a number, or a function asked after each step); ``failed`` is logged when a step
    raises."""

    def __init__(
        self,
        name: str,
        step: Callable[[], object],
        *,
        every: float | Callable[[], float],
        first: float | None = None,
        failed: str,
    ) -> None:
        self.name = name
        self._step = step
        self._every = every
        self._first = first
        self._failed = failed
        self._wake = threading.Event()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def wake(self) -> None:
        """Run the step now rather than at the end of the current wait."""
        self._wake.set()

    def stop(self, timeout: float | None = STOP_TIMEOUT_S) -> None:
        """End the loop once its current step is done; wait for it at most ``timeout`` seconds (None: until it ends)."""
        self._stopping = True
        self._wake.set()
        if self._thread.ident is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        wait = self._first if self._first is not None else self._next()
        failures = 0
        while True:
            self._wake.wait(wait)
            self._wake.clear()
            if self._stopping:
                return
            try:
                self._step()
            except Exception as error:
                failures += 1
                wait = backoff(self._next(), failures)
                if failures == 1:
                    log.exception("%s failed", self._failed)
                elif worth_logging(failures):
                    log.error("%s failed %d times in a row, next in %.0f s: %r", self._failed, failures, wait, error)
                continue
            if failures:
                log.warning("%s succeeded after %d failures in a row", self._failed, failures)
                failures = 0
            wait = self._next()

    def _next(self) -> float:
        return self._every() if callable(self._every) else self._every
