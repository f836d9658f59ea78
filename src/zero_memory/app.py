"""The application container: what every service is handed.

It holds the ports (settings, store, embedder, the judge factory, the clock),
the background executor and the telemetry writer, and imports nothing but
those. Wiring the
real adapters together is ``bootstrap.build_app``'s job; tests build one with
fakes the same way.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from zero_memory.clock import Clock, utcnow
from zero_memory.domain.memory import Memory
from zero_memory.embedding.base import Embedder
from zero_memory.embedding.query_process import QueryProcess
from zero_memory.judge.base import JudgeFactory
from zero_memory.settings import Settings
from zero_memory.store.base import Store
from zero_memory.telemetry import Telemetry

T = TypeVar("T")

# Threads for requests' work beside their reads: as many requests at once as a server serves side by side
# (the model takes the embeddings of those that wait for it together).
ALONGSIDE_THREADS = 8


@dataclass
class App:
    settings: Settings
    store: Store
    embedder: Embedder
    # (owner, run_id) -> the judge acting for that owner; see judge.owners.
    judge_factory: JudgeFactory
    clock: Clock = utcnow
    after_write: list[Callable[[Memory], None]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # Usage events and surfacings: written at once, or in batches while a server runs (``telemetry``).
    telemetry: Telemetry = field(init=False)
    _executor: ThreadPoolExecutor | None = None
    _pending: list[Future[Any]] = field(default_factory=list)
    _alongside: ThreadPoolExecutor | None = None
    # Recall's queries embedded beside its reads in a process of their own: started by a server on SQLite
    # (``server/warm.py``), stopped by ``close``.
    query_process: QueryProcess | None = None
    # MCP tool calls this process is answering now (``mcp/server.py``): the query process is asked only by a
    # call alone, whose reads would otherwise leave the other core idle.
    calls_in_flight: int = 0

    def __post_init__(self) -> None:
        self.telemetry = Telemetry(self.store)

    def background(self, work: Callable[[], Any]) -> Future[Any]:
        """Run work on the app's background thread (hygiene runs, write-triggered scans)."""
        with self.lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="zm-background")
            future = self._executor.submit(_logged, work)
            self._pending = [f for f in self._pending if not f.done()] + [future]
        return future

    def alongside(self, work: Callable[[], T]) -> Future[T]:
        """Run a request's own work on another thread while this one waits (recall's query embedding while its
        transaction reads): not the background's, whose runs may take minutes."""
        with self.lock:
            if self._alongside is None:
                self._alongside = ThreadPoolExecutor(max_workers=ALONGSIDE_THREADS, thread_name_prefix="zm-alongside")
            return self._alongside.submit(work)

    def wait_idle(self, timeout: float = 60) -> None:
        """Wait for the background work submitted so far (tests, shutdown)."""
        with self.lock:
            pending = list(self._pending)
        for future in pending:
            future.result(timeout=timeout)

    def close(self) -> None:
        self.telemetry.stop()
        with self.lock:
            executors = [self._executor, self._alongside]
            self._executor = self._alongside = None
        for executor in executors:
            if executor is not None:
                executor.shutdown(wait=True)
        if self.query_process is not None:
            self.query_process.close()
        self.store.close()


def _logged(work: Callable[[], Any]) -> Any:
    try:
        return work()
    except Exception:
        logging.getLogger("zero_memory").exception("background work failed")
        raise
