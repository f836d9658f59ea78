"""Retries in a long-running server: a background loop that extracts whatever chunk is due.

A chunk is first extracted right after it is accepted (``ingest`` schedules
it on the app's background thread). One whose attempt failed waits for its
retry time; ``zm serve`` runs this worker to take it up then, whoever's it
is; so does ``zm mcp`` (both through ``server/services.py``). Without either,
an owner's due chunks are taken up at their next ingestion, or by ``zm
capture drain``. A chunk that waited for its owner's daily allowance is due
again at the first pass after a raise (``budget.release``).
"""

from __future__ import annotations

from zero_memory.app import App
from zero_memory.background import Loop
from zero_memory.capture.extract import drain


def capture_worker(app: App, poll_s: float | None = None) -> Loop:
    """The loop that drains the due chunks every ``poll_s`` (default: the capture poll or retry delay, the shorter)."""
    config = app.settings.capture
    every = poll_s if poll_s is not None else min(config.poll_s, config.retry_after_s)
    return Loop("zm-capture", lambda: drain(app), every=every, failed="the capture worker's pass")
