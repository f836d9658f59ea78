"""Building the clusters from the database on a thread of its own, while searches go on.

Training the centroids and filing a million vectors into their lists takes
a minute or two of one core (docs/benchmarks-archive.md, "A million memories"); a
first start without a snapshot, or an index that has outgrown its lists, must
not hold every search that long. The build trains on a sample of the rows it
is handed, then reads the database as any other reader would, a page of
changes at a time (``changed_rows``, by the ``rev`` counter), each page in a
short read transaction of its own, so it holds no snapshot of the database
open and takes no lock a writer waits for.

Why reading page by page, in separate transactions, is sound: every change
takes the next value of the counter in its write transaction, and SQLite runs
one write transaction at a time, so the values are committed in order and a
page never misses a row below its last value that commits later. A row whose
current change is at or below the build's last value was read in its current
state: had it changed after being read, its value would be higher. When the
build ends at ``watermark``, the index holds exactly the rows with a vector
among those whose latest change is at or below it; what changed since is
caught up by the vector index like any other change. The sample only places
the centroids: a row is found through the list it is filed in, whatever the
sample held.

The index is handed over as it is, not saved here: the vector index catches
it up to the database before it saves it, as it does every snapshot, so no
snapshot holds a vector removed meanwhile (an account deletion).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

import numpy as np

from zero_memory.store.sqlite.clusters import Clusters
from zero_memory.store.sqlite.index_source import Row, Source

log = logging.getLogger(__name__)

# Rows read and filed at a time: a build asked to stop (the store closing) stops within one page.
PAGE = 1_000

Read = Callable[[], AbstractContextManager[Source]]


def build(clusters: Clusters, read: Read, stop: threading.Event, *, page: int = PAGE) -> tuple[Clusters, int] | None:
    """Every vector in the database filed into these (trained, empty) clusters, and the counter value they
    reflect; None if stopped.

    The database is read twice: first to count the rows each list will hold, so that room is made for
    them at once (``Clusters.reserve``: lists grown batch by batch take half as much memory again), then
    to file them. Rows written between the two readings only cost their lists' room."""
    counts = np.zeros(clusters.lists, dtype=np.int64)
    for rows in _pages(read, stop, page):
        vectors = [np.frombuffer(row[5], dtype=np.float32) for row in rows if row[5] is not None]
        kept = [vector for vector in vectors if vector.shape[0] == clusters.dim]
        if kept:
            counts += clusters.counts(np.stack(kept))
    if stop.is_set():
        return None
    clusters.reserve(counts)
    watermark = 0
    for rows in _pages(read, stop, page):
        watermark = max(row[6] for row in rows)
        _apply(clusters, rows)
    return None if stop.is_set() else (clusters, watermark)


def _pages(read: Read, stop: threading.Event, page: int) -> Iterator[list[Row]]:
    """Every row, a page of changes at a time, each page in a read transaction of its own."""
    watermark = 0
    while not stop.is_set():
        with read() as source:
            rows = source.changed_rows(watermark, page)
        if rows:
            watermark = max(row[6] for row in rows)
            yield rows
        if len(rows) < page:
            return


def _apply(clusters: Clusters, rows: list[Row]) -> None:
    # A row number can come twice in one page (a row removed, its number reused): its latest change wins.
    latest = {row[0]: row[5] for row in sorted(rows, key=lambda row: row[6])}
    vectors = {seq: np.frombuffer(blob, dtype=np.float32) for seq, blob in latest.items() if blob is not None}
    kept = {seq: vector for seq, vector in vectors.items() if vector.shape[0] == clusters.dim}
    clusters.remove([seq for seq in latest if seq not in kept])
    if kept:
        clusters.add(np.fromiter(kept, dtype=np.int64, count=len(kept)), np.stack(list(kept.values())))


class ClustersBuild:
    """One build on its thread: started, then taken (``result``) or stopped."""

    def __init__(self, read: Read, sample: Callable[[], np.ndarray], lists: int) -> None:
        """``sample`` gives the vectors to train on, called on the build's thread."""
        self.read = read
        self.lists = lists
        self._sample: Callable[[], np.ndarray] | None = sample  # released once trained (its vectors: a quarter of
        # a GB at a million rows)
        self.result: tuple[Clusters, int] | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="zm-clusters-build", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _take_sample(self) -> np.ndarray:
        sample, self._sample = self._sample, None
        assert sample is not None
        return sample()

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
            self.result = build(Clusters.trained(self._take_sample(), lists=self.lists), self.read, self._stop)
        except Exception:
            # The vector index starts another build at its next refresh; searches go on meanwhile.
            log.exception("vector index: building the clusters failed")
            return
        if self.result is not None:
            log.info(
                "vector index: %d rows in %d lists built in %.0f s",
                len(self.result[0]),
                self.result[0].lists,
                time.monotonic() - started,
            )
