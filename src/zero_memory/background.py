"""The one background-thread loop: a daemon thread that runs a step, waits, and runs it again until stopped.

The server's background services are each a step and a wait (``server/services.py`` starts them): the
scheduled hygiene tick (``hygiene/scheduler.py``), the capture retries (``capture/worker.py``) and the
telemetry flusher (``telemetry.py``). A step that raises is logged and the loop goes on; ``wake`` cuts the
current wait short (telemetry, once enough rows wait); ``stop`` ends the loop at its next wait, never in
the middle of a step.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger("zero_memory.background")

STOP_TIMEOUT_S = 10.0


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
        while True:
            self._wake.wait(wait)
            self._wake.clear()
            if self._stopping:
                return
            try:
                self._step()
            except Exception:
                log.exception("%s failed", self._failed)
            wait = self._next()

    def _next(self) -> float:
        return self._every() if callable(self._every) else self._every
