"""Retries in a long-running server: a daemon thread that extracts whatever chunk is due.

A chunk is first extracted right after it is accepted (``ingest`` schedules
it on the app's background thread). One whose attempt failed waits for its
retry time; ``zm serve`` runs this worker to take it up then, whoever's it
is; so does ``zm mcp``. Without either, an owner's due chunks are taken up
at their next ingestion, or by ``zm capture drain``. A chunk that waited for its
owner's daily allowance is due again at the first pass after a raise
(``budget.release``).
"""

from __future__ import annotations

import logging
import threading

from zero_memory.app import App
from zero_memory.capture.extract import drain

log = logging.getLogger(__name__)


class CaptureWorker:
    def __init__(self, app: App, poll_s: float | None = None) -> None:
        self.app = app
        config = app.settings.capture
        self.poll_s = poll_s if poll_s is not None else min(config.poll_s, config.retry_after_s)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="zm-capture", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _loop(self) -> None:
        while not self._stop.wait(self.poll_s):
            try:
                drain(self.app)
            except Exception:
                log.exception("the capture worker's pass failed")
