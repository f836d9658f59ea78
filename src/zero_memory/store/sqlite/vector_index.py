"""The SQLite store's vector index: candidates for a search, derived from the database.

The database is the truth. This index only proposes candidate rows (by
``seq``); the store then reads every candidate's row in the caller's
transaction and scores it exactly from its float32 vector, so the index can
miss a neighbour only by the clusters' approximation, and can never invent one,
return a row the filters exclude, or report an approximate similarity.

It follows the database through the ``rev`` counter that every memory change
takes (a trigger), so writes by any process appear at the next search. Below
``ann_min_rows`` indexed rows it is an exact numpy scan (as fast as an
approximate index there, and exact); above, the vectors partitioned into
clusters (``store/sqlite/clusters.py``), saved as a snapshot next to the database and
caught up from it on the next start, and trained again, on a thread of its
own, when the corpus has outgrown its number of clusters.

Filters (owner, scopes, kinds, liveness) are exact: they are masks over the
rows' current states. A search of the clusters skips the rows the mask does
not keep as it scans, and scans more clusters until enough pass; a mask that
keeps few rows is scanned whole instead.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np

from zero_memory.store.sqlite.clusters import TRAIN_PER_LIST, Clusters, Selection, lists_for
from zero_memory.store.sqlite.clusters_build import ClustersBuild, Read
from zero_memory.store.sqlite.filter_masks import FilterMasks
from zero_memory.store.sqlite.index_files import IndexFiles
from zero_memory.store.sqlite.index_source import Row, Source, State
from zero_memory.store.sqlite.int8_rows import Int8Rows
from zero_memory.store.sqlite.zeroed import zeroed

__all__ = ["Filter", "Row", "Source", "State", "VectorIndex"]

T = TypeVar("T")

log = logging.getLogger(__name__)

ANN_MIN_ROWS = 10_000  # below this many vectors an exact scan is about as fast as the clusters (measured)
EXACT_FILTER_ROWS = 3_000  # a filter keeping at most this many rows is scanned whole
# Clusters of at least this many rows are built on a thread of its own while searches scan int8 copies of
# the rows (``store/sqlite/clusters_build.py``): 10,000 vectors take a second, a million one to two minutes.
BACKGROUND_ROWS = 10_000
# Up to this many rows a search scans the exact float32 matrix while the first clusters are built, not int8
# copies of the rows: at 30,000 rows the int8 scan (each chunk converted to float32 first) took 35-230 ms a
# search beside the build where the float32 product takes a few (docs/benchmarks.md, "Recall while the store
# grows"). Beyond it, the matrix would be too large to hold beside the clusters being built (200 MB at
# 100,000 rows; 2 GB at a million).
MATRIX_ROWS = 120_000
BESIDE_THREADS = 8  # threads for the reads made beside searches: one for each search served at once
# Rows scored at a time by a scan of one vector: their float32 copy stays in the cache (measured at 100k
# int8 rows of 512 dimensions, one BLAS thread: 12-17 ms a scan in chunks of 4,096, 60-66 ms in chunks of
# 16,384, 19 ms for the product with a float32 matrix of them all).
SCAN_CHUNK = 4_096
SCAN_SCORES = 4_000_000  # scores computed at a time by a scan of many (the sweep's batches)
MAX_FETCH = 4_096  # most hits asked of the clusters before scanning the filtered rows whole
PAGE = 5_000  # rows read from the database at a time while catching up
SAVE_MIN_ROWS = 10_000  # changes applied since the last snapshot before saving another
SIMILARITY_SLACK = 0.02  # int8 scores vs exact ones: keep candidates this far below the floor
# Two int8 scores of one search may each be off by up to ~0.015 (measured at 100k memories: standard
# deviation 0.003, largest of 120,000 0.015), so a row whose int8 score is within twice that of the
# last one wanted may still belong before it once scored exactly.
TIE_MARGIN = 0.01


@dataclass(frozen=True, slots=True)
class Filter:
    scopes: frozenset[str] | None = None
    owner: str | None = None
    kinds: frozenset[str] | None = None

    @classmethod
    def of(cls, scopes: Collection[str] | None, owner: str | None, kinds: Collection[str] | None = None) -> Filter:
        return cls(
            frozenset(scopes) if scopes is not None else None,
            owner,
            frozenset(str(k) for k in kinds) if kinds is not None else None,
        )


class _Codes:
    """Small integer codes for repeated strings (owners, scopes, kinds); 0 is never used."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}

    def code(self, value: str) -> int:
        found = self.index.get(value)
        if found is None:
            found = self.index[value] = len(self.index) + 1
        return found

    def codes(self, values: Iterable[str]) -> np.ndarray:
        return np.array([self.index[v] for v in values if v in self.index], dtype=np.int32)


class VectorIndex:
    def __init__(
        self,
        dim: int,
        *,
        files: IndexFiles | None = None,
        ann_min_rows: int = ANN_MIN_ROWS,
        exact_filter_rows: int = EXACT_FILTER_ROWS,
        read: Read | None = None,
        background_rows: int = BACKGROUND_ROWS,
    ) -> None:
        """``read`` opens a read transaction of the database in the calling thread: given it, clusters of
        ``background_rows`` or more are built on a thread of its own (none: in the search that needs it)."""
        self.dim = dim
        self.files = files
        self.ann_min_rows = ann_min_rows
        self.exact_filter_rows = exact_filter_rows
        self.read = read
        self.background_rows = background_rows
        self.lock = threading.RLock()
        # Held for a whole save (taken before ``lock``, never while holding it): the searches wait only
        # while the clusters are written to the file, not for it to reach the disk.
        self._save_lock = threading.Lock()
        self._saver: threading.Thread | None = None
        self._beside: ThreadPoolExecutor | None = None
        self._beside_lock = threading.Lock()
        self._build: ClustersBuild | None = None
        self._clear()

    def _clear(self) -> None:
        if self._build is not None:
            self._build.stop(wait=False)
            self._build = None
        self.watermark = 0
        self.loaded = False
        self.restored_from: str | None = None  # the snapshot the index started from, if any
        self._owners, self._scopes, self._kinds = _Codes(), _Codes(), _Codes()
        self._owner = np.zeros(0, dtype=np.int32)
        self._scope = np.zeros(0, dtype=np.int32)
        self._kind = np.zeros(0, dtype=np.int32)
        self._live = np.zeros(0, dtype=bool)
        self._has = np.zeros(0, dtype=bool)  # the row has a vector in the matrix or the clusters
        self._rev = np.zeros(0, dtype=np.int64)
        self._matrix: np.ndarray | None = np.zeros((0, self.dim), dtype=np.float32)  # exact mode, rows by seq
        self._int8: Int8Rows | None = None  # while the first clusters are built in the background
        self._clusters: Clusters | None = None
        self._selections: dict[Filter, Selection] = {}  # masks as the clusters' scans check them
        self._masks: FilterMasks[Filter] = FilterMasks(self._matches)
        self._suspects: set[int] = set()
        self._unsaved = 0

    # -- state ------------------------------------------------------------------------

    @property
    def indexed(self) -> int:
        return int(np.count_nonzero(self._has))

    @property
    def uses_clusters(self) -> bool:
        return self._clusters is not None

    @property
    def building(self) -> bool:
        """Whether clusters are being built in the background (searches go on meanwhile)."""
        return self._build is not None

    def wait(self) -> None:
        """Wait for a background build to end; the next refresh takes its clusters."""
        build = self._build
        if build is not None:
            build.wait()

    def beside(self, work: Callable[[], T]) -> Future[T]:
        """Run ``work`` on another thread while the caller searches the index (a search's reads of its
        transaction): the second core. One thread for each search made at once (a server's worker
        threads); a search that finds them all busy waits for one."""
        with self._beside_lock:
            if self._beside is None:
                self._beside = ThreadPoolExecutor(max_workers=BESIDE_THREADS, thread_name_prefix="zm-beside")
            return self._beside.submit(work)

    def stop(self) -> None:
        """Stop a background build and wait for its threads: the store is closing."""
        with self.lock:
            build, self._build = self._build, None
            saver, self._saver = self._saver, None
        with self._beside_lock:
            beside, self._beside = self._beside, None
        if build is not None:
            build.stop()
        if saver is not None:
            saver.join()
        if beside is not None:
            beside.shutdown(wait=True)

    def reset(self) -> None:
        """Forget everything: the next search rebuilds from a snapshot or the database."""
        with self.lock:
            self._clear()

    def rewind(self, committed_rev: int) -> None:
        """A transaction that may have shown this index its own writes rolled back.

        Every row applied above ``committed_rev`` (the counter when that
        transaction began) is read again at the next refresh, in whatever
        state the database then has; the counter values it used will be
        reused by the next writer, so the watermark goes back too.
        """
        with self.lock:
            if self.watermark <= committed_rev:
                return
            self._suspects.update(int(s) for s in np.flatnonzero(self._rev > committed_rev))
            self.watermark = committed_rev

    def refresh(self, source: Source) -> None:
        """Bring the index up to the database as the caller's transaction sees it."""
        with self.lock:
            if not self.loaded:
                self._load(source)
            if self._build is not None and self._build.done:
                self._take_built_clusters()
            if self._suspects:
                suspects, self._suspects = sorted(self._suspects), set()
                found = {row[0]: row for row in source.rows_by_seq(suspects)}
                # Their current revs may be above rows not yet caught up: the watermark stays.
                self._apply([found.get(seq) or _gone(seq) for seq in suspects], advance=False)
            while True:
                rows = source.changed_rows(self.watermark, PAGE)
                self._apply(rows)
                # Catching up a large database keeps int8 copies of the rows as soon as there are too many
                # for the float32 matrix: it never holds more than a page beyond that bound (at 1M
                # memories it would be 2 GB). The clusters are made once every
                # row is read, for the rows there are and trained on a sample of them all.
                largest = max(self.ann_min_rows, self.background_rows, MATRIX_ROWS)
                if self._matrix is not None and self.indexed > largest:
                    self._keep_int8()
                if len(rows) < PAGE:
                    break
            first = self._clusters is None and self._build is None and self.indexed >= max(self.ann_min_rows, 1)
            if first or self._outgrown():
                self._start_clusters()
            if self._should_save() and self._saver is None and self.read is not None:
                self._save_beside()

    def _outgrown(self) -> bool:
        """Whether the clusters should be trained again for the rows there are now (none being built)."""
        clusters = self._clusters
        return clusters is not None and self._build is None and self.indexed > 0 and clusters.outgrown(self.indexed)

    # -- loading and saving -------------------------------------------------------------

    def _load(self, source: Source) -> None:
        """Start from the newest snapshot that belongs to this database, or from nothing."""
        self.loaded = True
        if self.files is None:
            return
        self.files.sweep_temporaries()
        for snapshot in self.files.snapshots():
            if not source.anchor_holds(snapshot.watermark, snapshot.anchor_rev, snapshot.anchor_id):
                log.info("vector index: %s belongs to another history of the database", snapshot.name)
                self.files.discard(snapshot)
                continue
            try:
                clusters = Clusters.restore(snapshot.path, self.dim)
            except (ValueError, RuntimeError, OSError) as error:
                log.warning("vector index: %s cannot be used (%s); trying an older one", snapshot.name, error)
                self.files.discard(snapshot)
                continue
            if len(clusters) < self.ann_min_rows:
                return  # small enough for the exact scan, built from the database
            self._adopt(clusters, snapshot.watermark, source)
            self.restored_from = snapshot.name
            return

    def _adopt(self, clusters: Clusters, watermark: int, source: Source) -> None:
        """Take restored clusters: states from the database, vectors they lack or should not have reconciled.

        Rows changed after the snapshot are caught up by the refresh that follows
        (from ``watermark``); the rows at or below it must all be in the clusters,
        and anything else in them must go: a snapshot cannot lose or invent
        a row even if it was made by a process that saw another state.
        """
        self._matrix = None
        self._clusters = clusters
        keys = clusters.keys()
        in_clusters = np.zeros(int(keys.max()) + 1 if len(keys) else 0, dtype=bool)
        in_clusters[keys] = True
        missing: list[int] = []
        after = 0
        while True:
            states = source.row_states(after, PAGE)
            for seq, owner, scope, kind, live, usable, rev in states:
                self._set_state(seq, owner, scope, kind, live, rev)
                present = seq < len(in_clusters) and bool(in_clusters[seq])
                if present:
                    in_clusters[seq] = False
                if rev > watermark:
                    # Caught up below; its vector, if any, is replaced then.
                    self._has[seq] = present
                elif usable and not present:
                    missing.append(seq)
                elif present and not usable:
                    clusters.remove([seq])
                else:
                    self._has[seq] = present
            if len(states) < PAGE:
                break
            after = states[-1][0]
        strays = np.flatnonzero(in_clusters)
        if len(strays):
            clusters.remove(strays)
        for start in range(0, len(missing), PAGE):
            self._apply(source.rows_by_seq(missing[start : start + PAGE]), advance=False)
        if missing or len(strays):
            log.warning("vector index: snapshot reconciled (%d rows added, %d removed)", len(missing), len(strays))
        self.watermark = watermark
        self._unsaved = len(missing) + len(strays)

    def _should_save(self) -> bool:
        return (
            self.files is not None
            and self._clusters is not None
            and self._unsaved >= max(SAVE_MIN_ROWS, self.indexed // 10)
        )

    def _save_beside(self) -> None:
        """Save a snapshot on a thread of its own, in a read transaction of its own: the search that found
        enough changes unsaved does not write it (47 ms at 30,000 rows, in that search, before)."""
        read = self.read
        assert read is not None

        def run() -> None:
            try:
                with read() as source:
                    self.refresh(source)
                    self.save(source)
            except Exception:
                log.exception("vector index: saving a snapshot failed")
            finally:
                with self.lock:
                    if self._saver is threading.current_thread():
                        self._saver = None

        self._saver = threading.Thread(target=run, name="zm-index-save", daemon=True)
        self._saver.start()

    def save(self, source: Source, *, at_least: int = 1) -> bool:
        """Write a snapshot of the clusters if they have ``at_least`` changes not yet saved.

        Searches wait only while the clusters are written to the file (the page cache), not while it is
        synced and renamed. A snapshot may hold changes above its watermark: they are caught up again
        from it when it is loaded, as any change after it is."""
        with self._save_lock:
            with self.lock:
                if self.files is None or self._clusters is None or self._unsaved < at_least or self._suspects:
                    return False
                anchor = source.anchor(self.watermark)
                if anchor is None:
                    return False
                watermark, clusters, unsaved = self.watermark, self._clusters, self._unsaved

            def write(path: Path) -> None:
                with self.lock:
                    if self._clusters is not clusters or self._suspects or self.watermark < watermark:
                        raise _Superseded  # rewound or replaced meanwhile: the next save writes them
                    clusters.save(path)

            try:
                self.files.write(watermark, anchor[0], anchor[1], write)
            except _Superseded:
                return False
            with self.lock:
                self._unsaved = max(0, self._unsaved - unsaved)
            return True

    # -- applying changes ---------------------------------------------------------------

    def _grow(self, needed: int) -> None:
        capacity = len(self._live)
        if needed <= capacity:
            return
        new = max(needed, capacity * 2, 1024)
        for name in ("_owner", "_scope", "_kind", "_live", "_has", "_rev"):
            old = getattr(self, name)
            grown = np.zeros(new, dtype=old.dtype)
            grown[:capacity] = old
            setattr(self, name, grown)
        if self._matrix is not None and new > len(self._matrix):
            # Room for every row the matrix may hold is made at once: the system hands out zeroed pages only as
            # rows are written, and the rows already there are never copied again. Copied at each doubling
            # (16 MB at 8,000 rows), a recall that caught up an import's rows spent 60-160 ms of CPU on it.
            # Never fewer rows than the states: a scan scores the matrix's rows against the masks row for row.
            rows = max(new, MATRIX_ROWS + PAGE)
            matrix = zeroed(rows, self.dim, np.float32)
            matrix[: len(self._matrix)] = self._matrix
            self._matrix = matrix
        if self._int8 is not None:
            self._int8.grow(new)
        self._masks.clear()
        self._selections.clear()

    def _set_state(self, seq: int, owner: str, scope: str, kind: str, live: bool, rev: int) -> None:
        self._grow(seq + 1)
        self._owner[seq] = self._owners.code(owner)
        self._scope[seq] = self._scopes.code(scope)
        self._kind[seq] = self._kinds.code(kind)
        self._live[seq] = live
        self._rev[seq] = rev

    def _apply(self, rows: list[Row], *, advance: bool = True) -> None:
        if not rows:
            return
        added: dict[int, np.ndarray] = {}
        removed: list[int] = []
        for seq, owner, scope, kind, live, blob, rev in rows:
            self._set_state(seq, owner, scope, kind, live, rev)
            if advance:
                self.watermark = max(self.watermark, rev)
            vector = np.frombuffer(blob, dtype=np.float32) if blob is not None else None
            if vector is None or vector.shape[0] != self.dim:
                if self._has[seq]:
                    removed.append(seq)
                # A row added, then removed within one page (its number reused): nothing of it stays.
                added.pop(seq, None)
                self._has[seq] = False
                continue
            if self._matrix is not None:
                self._matrix[seq] = vector
            elif self._clusters is None or not self._has[seq] or _moved(self._clusters, seq, vector):
                added[seq] = vector
            self._has[seq] = True
        keys = np.fromiter(added, dtype=np.int64, count=len(added))
        if self._clusters is not None:
            if removed:
                self._clusters.remove(removed)
            if added:
                self._clusters.add(keys, np.stack(list(added.values())))
        elif self._int8 is not None and added:
            self._int8.put(keys, np.stack(list(added.values())))
        if len(self._masks):
            self._masks.changed(np.array([row[0] for row in rows]))
        self._selections.clear()
        self._unsaved += len(rows)

    def _start_clusters(self) -> None:
        """Leave the exact scan for clusters, or train them again for the rows there are now: built here,
        or, if large, on a thread; searches go on meanwhile, over the clusters there are, over the exact
        scan's float32 matrix, or, beyond ``MATRIX_ROWS``, over int8 copies of the rows (a quarter of it)."""
        lists = lists_for(self.indexed)
        if self.read is None or self.indexed < self.background_rows:
            self._build_clusters(lists)
            return
        if self.indexed > MATRIX_ROWS:
            self._keep_int8()
        log.info("vector index: building %d clusters in the background; searches go on meanwhile", lists)
        self._build = ClustersBuild(self.read, self._sample_later(lists), lists)
        self._build.start()

    def _sample_later(self, lists: int) -> Callable[[], np.ndarray]:
        """The vectors to train ``lists`` centroids on, as a call a build makes on its own thread: what this
        search must copy is copied here, the float32 vectors are made there.

        The float32 matrix is copied there (20 MB at 10,000 rows: 100-160 ms of a recall during an import):
        its rows are only written in place, so the copy reads them as they are then; a row rewritten
        meanwhile only moves a centroid a little. The int8 copies and the clusters change under a thread:
        their 8-bit codes are copied here, a quarter of the vectors, and decoded there."""
        if self._matrix is not None:
            matrix, seqs = self._matrix, self._sample_seqs(lists)
            return lambda: matrix[seqs]
        if self._int8 is not None:
            return self._int8.rows_later(self._sample_seqs(lists))
        assert self._clusters is not None
        return self._clusters.sample_later(lists * TRAIN_PER_LIST)

    def _keep_int8(self) -> None:
        """Hold int8 copies of the rows instead of the exact scan's float32 matrix (a quarter of it)."""
        if self._matrix is None:
            return
        self._int8 = Int8Rows(self.dim)
        self._int8.grow(len(self._has))
        seqs = np.flatnonzero(self._has)
        for start in range(0, len(seqs), PAGE):
            chunk = seqs[start : start + PAGE]
            self._int8.put(chunk, self._matrix[chunk])
        self._matrix = None

    def _sample(self, lists: int) -> np.ndarray:
        """Vectors to train ``lists`` centroids on."""
        return self._sample_later(lists)()

    def _sample_seqs(self, lists: int) -> np.ndarray:
        """The rows to train ``lists`` centroids on: a few dozen a list, drawn evenly from every row."""
        seqs = np.flatnonzero(self._has)
        size = min(len(seqs), lists * TRAIN_PER_LIST)
        return np.sort(np.random.default_rng(len(seqs)).choice(seqs, size, replace=False))

    def _vectors(self, seqs: np.ndarray) -> np.ndarray:
        """These rows' vectors, from whatever holds them: the matrix, the int8 copies, or the clusters."""
        if self._matrix is not None:
            return self._matrix[seqs]
        if self._int8 is not None:
            return self._int8.rows(seqs)
        assert self._clusters is not None
        return self._clusters.vectors(seqs)

    def _take_built_clusters(self) -> None:
        """Search the clusters a background build made from here on, if it finished.

        They hold the rows with a vector among those whose latest change is at or below the build's
        counter value (``store/sqlite/clusters_build.py``); this index knows every row's state up to its own.
        From the lower of the two, rows are read again and brought into the clusters as any change is.
        """
        assert self._build is not None
        build, self._build = self._build, None
        if build.result is None:
            return  # failed or stopped: the next refresh starts another
        clusters, built_at = build.result
        keys = clusters.keys()
        if len(keys):
            self._grow(int(keys.max()) + 1)
        self._has[:] = False
        self._has[keys] = True
        self._clusters, self._int8, self._matrix = clusters, None, None
        self.watermark = min(self.watermark, built_at)
        self._masks.clear()
        self._selections.clear()
        self._unsaved = len(keys)  # saved at the next refresh outside a write, caught up first

    def _build_clusters(self, lists: int) -> None:
        """Put every vector in new clusters (from the matrix, the int8 copies, or read back from the present
        clusters)."""
        seqs = np.flatnonzero(self._has)
        clusters = Clusters.trained(self._sample(lists), lists=lists)
        chunks = [seqs[start : start + PAGE] for start in range(0, len(seqs), PAGE)]
        counts = np.zeros(clusters.lists, dtype=np.int64)
        for chunk in chunks:
            counts += clusters.counts(self._vectors(chunk))
        clusters.reserve(counts)  # room made at once, as a background build does
        for chunk in chunks:
            clusters.add(chunk, self._vectors(chunk))
        self._clusters, self._matrix, self._int8 = clusters, None, None
        self._selections.clear()
        self._unsaved = len(seqs)

    # -- filters ------------------------------------------------------------------------

    def _matches(self, flt: Filter, seqs: np.ndarray | slice) -> np.ndarray:
        mask = self._live[seqs] & self._has[seqs]
        if flt.owner is not None:
            mask &= self._owner[seqs] == self._owners.index.get(flt.owner, -1)
        if flt.scopes is not None:
            mask &= np.isin(self._scope[seqs], self._scopes.codes(flt.scopes))
        if flt.kinds is not None:
            mask &= np.isin(self._kind[seqs], self._kinds.codes(flt.kinds))
        return mask

    def _mask(self, flt: Filter) -> np.ndarray:
        """Rows the filter keeps, by seq; cached per filter, caught up on the rows changed since its last use."""
        if flt not in self._masks and len(self._masks) >= 64:
            self._masks.clear()
            self._selections.clear()
        return self._masks.get(flt)

    def _selection(self, flt: Filter) -> Selection:
        """The filter's mask as a bitmap; made again after a change to any row."""
        selection = self._selections.get(flt)
        if selection is None:
            selection = self._selections[flt] = Selection.of(self._mask(flt))
        return selection

    # -- search -------------------------------------------------------------------------

    def candidates(self, vector: np.ndarray, flt: Filter, *, want: int, floor: float) -> list[tuple[int, float]]:
        """Up to ``want`` rows the filter keeps, most similar first, above ``floor`` (less a slack
        when the scores are approximate): (seq, similarity)."""
        return self.candidates_many(np.atleast_2d(vector), flt, want=want, floor=floor)[0]

    def candidates_many(
        self, vectors: np.ndarray, flt: Filter, *, want: int, floor: float
    ) -> list[list[tuple[int, float]]]:
        with self.lock:
            vectors = np.ascontiguousarray(np.atleast_2d(vectors), dtype=np.float32)
            mask = self._mask(flt)
            population = int(np.count_nonzero(mask))
            if population == 0 or want <= 0:
                return [[] for _ in range(len(vectors))]
            if self._matrix is not None:
                return [_top(row, want, floor) for row in self._scores(vectors, self._matrix, mask)]
            if self._clusters is None or population <= self.exact_filter_rows:
                return self._scan(vectors, mask, want, floor)
            fetch = _fetch_for(want)
            within = self._selection(flt)
            keys, sims = self._clusters.search(vectors, fetch, within=within)
            results: list[list[tuple[int, float]] | None] = []
            for row_keys, row_sims in zip(keys, sims, strict=True):
                results.append(self._kept(row_keys, row_sims, mask, want, floor - SIMILARITY_SLACK, fetch))
            for n, found in enumerate(results):
                if found is None:
                    results[n] = self._widen(vectors[n], flt, want, floor, fetch)
            return [r or [] for r in results]

    def nearest_many(
        self,
        vectors: np.ndarray,
        flt: Filter,
        *,
        count: int,
        floor: float,
        threads: int = 1,
        walk: int | None = None,
        narrow: bool = False,
        known: Sequence[tuple[int, int]] = (),
    ) -> list[np.ndarray]:
        """For each vector, the rows the filter keeps that may be among its ``count`` most similar above
        ``floor`` once scored exactly: seqs, most similar first by the index's scores.

        Those are the first ``count`` by the index's scores and every other one whose score is within
        the scores' error of the last of them (exact scores: a tie; int8 scores: ``TIE_MARGIN``); a
        caller wanting ``count`` neighbours scores only these exactly, not a fixed over-fetch.

        ``walk``: the hits a search of the clusters returns at first (None: as for a search of ``count``
        rows); ``narrow``: it scans the fewer clusters that find a stored memory's own neighbours
        (``Clusters.narrow_probes``), not a query's.

        ``known`` are (vector, seq) rows the caller knows of, such as a subject's own row it leaves
        out. A search that did not return a known row the filter keeps and that scores above the
        search's cut did not scan part of the neighbourhood: that search goes again, over four times
        the clusters.
        """
        with self.lock:
            vectors = np.ascontiguousarray(np.atleast_2d(vectors), dtype=np.float32)
            mask = self._mask(flt)
            if count <= 0 or not mask.any():
                return [np.zeros(0, dtype=np.int64) for _ in range(len(vectors))]
            if self._matrix is not None:
                sims = self._scores(vectors, self._matrix, mask)
                return [_nearest(np.flatnonzero(row >= floor), row[row >= floor], count, EXACT_TIE) for row in sims]
            population = int(np.count_nonzero(mask))
            if self._clusters is None or population <= self.exact_filter_rows:
                return [
                    _nearest(*_columns(hits), count, TIE_MARGIN) for hits in self._scan(vectors, mask, count, floor)
                ]
            fetch = _fetch_for(count) if walk is None else min(MAX_FETCH, max(walk, count))
            probes = self._clusters.narrow_probes if narrow else self._clusters.probes
            known_rows = self._known(vectors, mask, known)
            return self._search_many(vectors, flt, count, floor, threads, fetch, probes, known_rows)

    def _known(self, vectors: np.ndarray, mask: np.ndarray, known: Sequence[tuple[int, int]]) -> np.ndarray:
        """The known rows a search should find: (vector, seq, the clusters' score) of those the filter keeps."""
        assert self._clusters is not None
        rows = np.array([(n, seq) for n, seq in known if 0 <= seq < len(mask) and mask[seq]], dtype=np.int64)
        if len(rows) == 0:
            return np.zeros((0, 3))
        rows = rows[self._clusters.contains(rows[:, 1])]
        stored = self._clusters.vectors(rows[:, 1])
        norms = np.maximum(np.linalg.norm(stored, axis=1) * np.linalg.norm(vectors[rows[:, 0]], axis=1), 1e-12)
        scores = np.einsum("ij,ij->i", stored, vectors[rows[:, 0]]) / norms
        return np.column_stack([rows, scores])

    def _search_many(
        self,
        vectors: np.ndarray,
        flt: Filter,
        count: int,
        floor: float,
        threads: int,
        fetch: int,
        probes: int,
        known: np.ndarray,
    ) -> list[np.ndarray]:
        assert self._clusters is not None
        mask, within = self._mask(flt), self._selection(flt)
        found: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * len(vectors)
        pending = np.arange(len(vectors))
        while len(pending):
            keys, sims = self._clusters.search(vectors[pending], fetch, within=within, probes=probes, threads=threads)
            near, cut, short = self._near(keys, sims, mask, count, floor)
            rows = np.split(keys[near], np.cumsum(near.sum(axis=1))[:-1])
            for n, seqs in zip(pending.tolist(), rows, strict=True):
                found[n] = seqs
            for at in np.flatnonzero(short):
                hits = self._widen(vectors[pending[at]], flt, count, floor, fetch)
                found[pending[at]] = _nearest(*_columns(hits), count, TIE_MARGIN)
            again = _missed(pending, keys, cut, known) & ~short
            widest = fetch >= MAX_FETCH and probes >= self._clusters.lists
            pending = pending[again] if not widest else pending[:0]
            fetch, probes = min(fetch * 4, MAX_FETCH), min(probes * 4, self._clusters.lists)
        return found

    @staticmethod
    def _near(
        keys: np.ndarray, sims: np.ndarray, mask: np.ndarray, count: int, floor: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Of each search's hits (most similar first): those that can make its cut, the cut (the score of
        its count-th kept hit, the floor less the slack when fewer pass), and whether the search is
        short: fewer than ``count`` hits pass although the walk went on above the floor."""
        low = floor - SIMILARITY_SLACK
        inside = (keys >= 0) & (keys < len(mask))
        keep = inside & mask[np.where(inside, keys, 0)] & (sims >= low)
        kept = keep.sum(axis=1)
        short = (kept < count) & (sims[:, -1] >= low)
        last = np.argmax(np.cumsum(keep, axis=1) >= count, axis=1)
        cut = np.where(kept >= count, sims[np.arange(len(sims)), last], low)
        return keep & (sims >= cut[:, None] - TIE_MARGIN), cut, short

    def _kept(
        self,
        keys: np.ndarray,
        sims: np.ndarray,
        mask: np.ndarray,
        want: int,
        floor: float,
        fetch: int,
    ) -> list[tuple[int, float]] | None:
        """The hits the mask keeps, or None when the search may not have reached enough of them."""
        valid = (keys >= 0) & (keys < len(mask))
        keys, sims = keys[valid], sims[valid]
        keep = mask[keys] & (sims >= floor)
        kept_keys, kept_sims = keys[keep], sims[keep]
        exhausted = len(keys) < fetch or (len(sims) > 0 and sims[-1] < floor)
        if len(kept_keys) >= want or exhausted:
            return list(zip(kept_keys[:want].tolist(), kept_sims[:want].tolist(), strict=True))
        return None

    def _widen(self, vector: np.ndarray, flt: Filter, want: int, floor: float, fetch: int) -> list[tuple[int, float]]:
        """Ask the clusters for four times the hits at a time (scanning as many more of them) until enough
        pass, then scan the filtered rows whole."""
        assert self._clusters is not None
        mask, within = self._mask(flt), self._selection(flt)
        while fetch < MAX_FETCH:
            fetch = min(fetch * 4, MAX_FETCH)
            keys, sims = self._clusters.search(vector, fetch, within=within)
            found = self._kept(keys[0], sims[0], mask, want, floor - SIMILARITY_SLACK, fetch)
            if found is not None:
                return found
        return self._scan(vector[None, :], mask, want, floor)[0]

    def _scan(self, vectors: np.ndarray, mask: np.ndarray, want: int, floor: float) -> list[list[tuple[int, float]]]:
        """Score every row the mask keeps from its 8-bit copy (the clusters', or the int8 rows kept while
        the first clusters are built): each vector's most similar rows above the floor less the slack,
        twice as many as wanted (the scores are approximate), most similar first."""
        keep = max(want * 2, want + 16)
        seqs = np.flatnonzero(mask)
        step = min(SCAN_CHUNK, max(keep, SCAN_SCORES // max(len(vectors), 1)))
        best_seqs = np.zeros((len(vectors), 0), dtype=np.int64)
        best = np.zeros((len(vectors), 0), dtype=np.float32)
        for start in range(0, len(seqs), step):
            chunk = seqs[start : start + step]
            best_seqs = np.hstack([best_seqs, np.broadcast_to(chunk, (len(vectors), len(chunk)))])
            best = np.hstack([best, self._cosines(vectors, chunk)])
            if best.shape[1] > keep:
                top = np.argpartition(-best, keep - 1, axis=1)[:, :keep]
                best_seqs, best = np.take_along_axis(best_seqs, top, axis=1), np.take_along_axis(best, top, axis=1)
        results = []
        for row_seqs, row in zip(best_seqs, best, strict=True):
            above = np.flatnonzero(row >= floor - SIMILARITY_SLACK)
            above = above[np.argsort(-row[above], kind="stable")]
            results.append([(int(row_seqs[i]), float(row[i])) for i in above])
        return results

    def _cosines(self, vectors: np.ndarray, seqs: np.ndarray) -> np.ndarray:
        if self._int8 is not None:
            return self._int8.cosines(vectors, seqs)
        assert self._clusters is not None
        # The cosine with the rows read back, not the raw product: a row's 8-bit copy is of about unit
        # length, not exactly, and a score a little low would lose a row just above a floor.
        stored = self._clusters.vectors(seqs)
        sims: np.ndarray = vectors @ stored.T
        sims /= np.maximum(np.linalg.norm(stored, axis=1), 1e-12)
        return sims

    @staticmethod
    def _scores(vectors: np.ndarray, matrix: np.ndarray, mask: np.ndarray) -> np.ndarray:
        n = len(mask)
        sims = vectors @ matrix[:n].T
        sims += np.where(mask, np.float32(0), np.float32(-np.inf))
        return sims


def _top(row: np.ndarray, want: int, floor: float) -> list[tuple[int, float]]:
    above = np.flatnonzero(row >= floor)
    if len(above) > want:
        above = above[np.argpartition(-row[above], want - 1)[:want]]
    above = above[np.argsort(-row[above], kind="stable")]
    return list(zip(above.tolist(), row[above].tolist(), strict=True))


def _missed(pending: np.ndarray, keys: np.ndarray, cut: np.ndarray, probes: np.ndarray) -> np.ndarray:
    """Which of the pending searches left out a probe (a known row) scoring above its cut."""
    missed = np.zeros(len(pending), dtype=bool)
    if len(probes) == 0:
        return missed
    where = np.full(int(pending.max()) + 1, -1)
    where[pending] = np.arange(len(pending))
    vector = probes[:, 0].astype(np.int64)
    ours = vector < len(where)
    row = np.where(ours, where[np.minimum(vector, len(where) - 1)], -1)
    ours &= row >= 0
    row, seq, score = row[ours], probes[ours, 1].astype(np.int64), probes[ours, 2]
    absent = ~(keys[row] == seq[:, None]).any(axis=1)
    missed[row[absent & (score >= cut[row] - TIE_MARGIN)]] = True
    return missed


EXACT_TIE = 1e-6  # float32 scores of one product: equal rows may differ in the last bit


def _nearest(seqs: np.ndarray, sims: np.ndarray, count: int, margin: float) -> np.ndarray:
    """The ``count`` most similar seqs and those within ``margin`` of the last of them, most similar first."""
    if len(sims) > count:
        last = np.partition(sims, len(sims) - count)[len(sims) - count]
        near = sims >= last - margin
        seqs, sims = seqs[near], sims[near]
    return seqs[np.argsort(-sims, kind="stable")].astype(np.int64, copy=False)


def _columns(hits: list[tuple[int, float]]) -> tuple[np.ndarray, np.ndarray]:
    return np.array([seq for seq, _ in hits], dtype=np.int64), np.array([sim for _, sim in hits], dtype=np.float32)


def _fetch_for(want: int) -> int:
    """How many hits to ask the clusters for when ``want`` rows are wanted: the scan skips the rows the
    filter does not keep, so every hit passes it; twice as many, for the rows a caller then leaves out."""
    return min(MAX_FETCH, want * 2 + 16)


def _moved(clusters: Clusters | None, seq: int, vector: np.ndarray) -> bool:
    """Whether a row's new vector differs from the clusters' copy by more than 8-bit rounding."""
    if clusters is None:
        return True
    stored = clusters.vectors(np.array([seq]))
    if len(stored) == 0:
        return True
    return float(stored[0] @ vector) < 0.99 * float(np.linalg.norm(vector))


class _Superseded(Exception):
    """The clusters changed in a way a snapshot begun before cannot hold."""


def _gone(seq: int) -> Row:
    """A row that no longer exists: nothing to find."""
    return (seq, "", "", "", False, None, 0)
