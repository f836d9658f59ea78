"""Building the graph from the database on a thread of its own, while searches scan the rows.

Linking a million vectors takes about 25 minutes on one core (docs/benchmarks.md,
"A million memories"); a first start without a snapshot must not hold every
search that long. The build reads the database as any other reader would, a
page of changes at a time (``changed_rows``, by the ``rev`` counter), each page
in a short read transaction of its own, so it holds no snapshot of the
database open and takes no lock a writer waits for.

Why reading page by page, in separate transactions, is sound: every change
takes the next value of the counter in its write transaction, and SQLite runs
one write transaction at a time, so the values are committed in order and a
page never misses a row below its last value that commits later. A row whose
current change is at or below the build's last value was read in its current
state: had it changed after being read, its value would be higher. When the build ends at ``watermark``, the graph
holds exactly the rows with a vector among those whose latest change is at or
below it; what changed since is caught up by the index like any other change.

The graph is handed to the index as it is, not saved here: the index catches
it up to the database before it saves it, as it does every snapshot, so no
snapshot holds a vector removed meanwhile (an account deletion).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager

import numpy as np

from zero_memory.store.graph import Graph
from zero_memory.store.index_source import Row, Source

log = logging.getLogger(__name__)

# Rows read and linked at a time: a build asked to stop (the store closing) stops within one page,
# about 1.5 s of linking at a million memories.
PAGE = 1_000

Read = Callable[[], AbstractContextManager[Source]]


def build(dim: int, read: Read, stop: threading.Event, *, page: int = PAGE) -> tuple[Graph, int] | None:
    """The graph of every vector in the database and the counter value it reflects; None if stopped."""
    graph = Graph(dim)
    watermark = 0
    while not stop.is_set():
        with read() as source:
            rows = source.changed_rows(watermark, page)
        if rows:
            watermark = max(row[6] for row in rows)
        _apply(graph, rows)
        if len(rows) < page:
            return graph, watermark
    return None


def _apply(graph: Graph, rows: list[Row]) -> None:
    # A row number can come twice in one page (a row removed, its number reused): its latest change wins.
    latest = {row[0]: row[5] for row in sorted(rows, key=lambda row: row[6])}
    vectors = {seq: np.frombuffer(blob, dtype=np.float32) for seq, blob in latest.items() if blob is not None}
    kept = {seq: vector for seq, vector in vectors.items() if vector.shape[0] == graph.dim}
    graph.remove([seq for seq in latest if seq not in kept])
    if kept:
        graph.add(np.fromiter(kept, dtype=np.int64, count=len(kept)), np.stack(list(kept.values())))


class GraphBuild:
    """One build on its thread: started, then taken (``result``) or stopped."""

    def __init__(self, dim: int, read: Read) -> None:
        self.dim = dim
        self.read = read
        self.result: tuple[Graph, int] | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="zm-graph-build", daemon=True)

    def start(self) -> None:
        self._thread.start()

    @property
    def done(self) -> bool:
        return not self._thread.is_alive()

    def wait(self) -> None:
        if self._thread.ident is not None:
            self._thread.join()

    def stop(self, *, wait: bool = True) -> None:
        self._stop.set()
        if wait:
            self.wait()

    def _run(self) -> None:
        started = time.monotonic()
        try:
            self.result = build(self.dim, self.read, self._stop)
        except Exception:
            # The index starts another build at its next refresh; searches keep scanning the rows.
            log.exception("vector index: building the graph failed")
            return
        if self.result is not None:
            log.info("vector index: graph of %d rows built in %.0f s", len(self.result[0]), time.monotonic() - started)
