"""The SQLite store's vector index: candidates for a search, derived from the database.

The database is the truth. This index only proposes candidate rows (by
``seq``); the store then reads every candidate's row in the caller's
transaction and scores it exactly from its float32 vector, so the index can
miss a neighbour only by the graph's approximation, and can never invent one,
return a row the filters exclude, or report an approximate similarity.

It follows the database through the ``rev`` counter that every memory change
takes (a trigger), so writes by any process appear at the next search. Below
``ann_min_rows`` indexed rows it is an exact numpy scan (as fast as a graph
there, and exact); above, an HNSW graph (``store/graph.py``) saved as a
snapshot next to the database and caught up from it on the next start.

Filters (owner, scopes, kinds, liveness) are exact: they are masks over the
rows' current states. A graph search over-fetches in proportion to how few
rows the mask keeps and widens until enough pass; a mask that keeps few rows
is scanned whole instead.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from zero_memory.store.graph import Graph
from zero_memory.store.graph_build import GraphBuild, Read
from zero_memory.store.index_files import IndexFiles
from zero_memory.store.index_source import Row, Source, State
from zero_memory.store.int8_rows import Int8Rows

__all__ = ["Filter", "Row", "Source", "State", "VectorIndex"]

log = logging.getLogger(__name__)

ANN_MIN_ROWS = 10_000  # below this many vectors an exact scan is about as fast as the graph (measured)
EXACT_FILTER_ROWS = 3_000  # a filter keeping at most this many rows is scanned whole
# A graph of at least this many rows is built on a thread of its own while searches scan int8 copies of
# the rows (``store/graph_build.py``): linking 10,000 vectors takes seconds, a million 25 minutes.
BACKGROUND_ROWS = 10_000
# Rows scored at a time by a scan of one vector: their float32 copy stays in the cache (measured at 100k
# int8 rows of 512 dimensions, one BLAS thread: 12-17 ms a scan in chunks of 4,096, 60-66 ms in chunks of
# 16,384, 19 ms for the product with a float32 matrix of them all).
SCAN_CHUNK = 4_096
SCAN_SCORES = 4_000_000  # scores computed at a time by a scan of many (the sweep's batches)
MAX_FETCH = 4_096  # widest graph search before scanning the filtered rows whole
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
        """``read`` opens a read transaction of the database in the calling thread: given it, a graph of
        ``background_rows`` or more is built on a thread of its own (none: in the search that needs it)."""
        self.dim = dim
        self.files = files
        self.ann_min_rows = ann_min_rows
        self.exact_filter_rows = exact_filter_rows
        self.read = read
        self.background_rows = background_rows
        self.lock = threading.RLock()
        self._build: GraphBuild | None = None
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
        self._has = np.zeros(0, dtype=bool)  # the row has a vector in the matrix or the graph
        self._rev = np.zeros(0, dtype=np.int64)
        self._matrix: np.ndarray | None = np.zeros((0, self.dim), dtype=np.float32)  # exact mode, rows by seq
        self._int8: Int8Rows | None = None  # while a graph is built in the background
        self._graph: Graph | None = None
        self._masks: dict[Filter, np.ndarray] = {}
        self._suspects: set[int] = set()
        self._unsaved = 0

    # -- state ------------------------------------------------------------------------

    @property
    def indexed(self) -> int:
        return int(np.count_nonzero(self._has))

    @property
    def uses_graph(self) -> bool:
        return self._graph is not None

    @property
    def building(self) -> bool:
        """Whether a graph is being built in the background (searches scan the rows meanwhile)."""
        return self._build is not None

    def wait(self) -> None:
        """Wait for a background build to end; the next refresh takes its graph."""
        build = self._build
        if build is not None:
            build.wait()

    def stop(self) -> None:
        """Stop a background build and wait for its thread: the store is closing."""
        with self.lock:
            build, self._build = self._build, None
        if build is not None:
            build.stop()

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
                self._take_built_graph()
            if self._suspects:
                suspects, self._suspects = sorted(self._suspects), set()
                found = {row[0]: row for row in source.rows_by_seq(suspects)}
                # Their current revs may be above rows not yet caught up: the watermark stays.
                self._apply([found.get(seq) or _gone(seq) for seq in suspects], advance=False)
            while True:
                rows = source.changed_rows(self.watermark, PAGE)
                self._apply(rows)
                # Catching up a large database goes into the graph as soon as it is large enough: the
                # exact scan's float32 matrix never holds more than a page beyond the bound (at 1M
                # memories it would be 2 GB).
                if self._graph is None and self._build is None and self.indexed >= self.ann_min_rows:
                    self._start_graph()
                if len(rows) < PAGE:
                    break
            if self._should_save() and source.can_save():
                self.save(source)

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
                graph = Graph.restore(snapshot.path, self.dim, linked_with=snapshot.linked_with)
            except (ValueError, RuntimeError, OSError) as error:
                log.warning("vector index: %s cannot be used (%s); trying an older one", snapshot.name, error)
                self.files.discard(snapshot)
                continue
            if len(graph) < self.ann_min_rows:
                return  # small enough for the exact scan, built from the database
            self._adopt(graph, snapshot.watermark, source)
            self.restored_from = snapshot.name
            return

    def _adopt(self, graph: Graph, watermark: int, source: Source) -> None:
        """Take a restored graph: states from the database, vectors it lacks or should not have reconciled.

        Rows changed after the snapshot are caught up by the refresh that follows
        (from ``watermark``); the rows at or below it must all be in the graph,
        and anything else in the graph must go: a snapshot cannot lose or invent
        a row even if it was made by a process that saw another state.
        """
        self._matrix = None
        self._graph = graph
        keys = graph.keys()
        in_graph = np.zeros(int(keys.max()) + 1 if len(keys) else 0, dtype=bool)
        in_graph[keys] = True
        missing: list[int] = []
        after = 0
        while True:
            states = source.row_states(after, PAGE)
            for seq, owner, scope, kind, live, usable, rev in states:
                self._set_state(seq, owner, scope, kind, live, rev)
                present = seq < len(in_graph) and bool(in_graph[seq])
                if present:
                    in_graph[seq] = False
                if rev > watermark:
                    # Caught up below; its vector, if any, is replaced then.
                    self._has[seq] = present
                elif usable and not present:
                    missing.append(seq)
                elif present and not usable:
                    graph.remove([seq])
                else:
                    self._has[seq] = present
            if len(states) < PAGE:
                break
            after = states[-1][0]
        strays = np.flatnonzero(in_graph)
        if len(strays):
            graph.remove(strays)
        for start in range(0, len(missing), PAGE):
            self._apply(source.rows_by_seq(missing[start : start + PAGE]), advance=False)
        if missing or len(strays):
            log.warning("vector index: snapshot reconciled (%d rows added, %d removed)", len(missing), len(strays))
        self.watermark = watermark
        self._unsaved = len(missing) + len(strays)

    def _should_save(self) -> bool:
        return (
            self.files is not None
            and self._graph is not None
            and self._unsaved >= max(SAVE_MIN_ROWS, self.indexed // 10)
        )

    def save(self, source: Source, *, at_least: int = 1) -> bool:
        """Write a snapshot of the graph if it has ``at_least`` changes not yet saved."""
        with self.lock:
            if self.files is None or self._graph is None or self._unsaved < at_least or self._suspects:
                return False
            anchor = source.anchor(self.watermark)
            if anchor is None:
                return False
            graph = self._graph
            self.files.write(self.watermark, anchor[0], anchor[1], graph.save, linked_with=graph.linked_with)
            self._unsaved = 0
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
        if self._matrix is not None:
            matrix = np.zeros((new, self.dim), dtype=np.float32)
            matrix[:capacity] = self._matrix
            self._matrix = matrix
        if self._int8 is not None:
            self._int8.grow(new)
        self._masks.clear()

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
            elif self._graph is None or not self._has[seq] or _moved(self._graph, seq, vector):
                added[seq] = vector
            self._has[seq] = True
        keys = np.fromiter(added, dtype=np.int64, count=len(added))
        if self._graph is not None:
            if removed:
                self._graph.remove(removed)
            if added:
                self._graph.add(keys, np.stack(list(added.values())))
        elif self._int8 is not None and added:
            self._int8.put(keys, np.stack(list(added.values())))
        if self._masks:
            seqs = np.array([row[0] for row in rows])
            for flt, mask in self._masks.items():
                mask[seqs] = self._matches(flt, seqs)
        self._unsaved += len(rows)

    def _start_graph(self) -> None:
        """Leave the exact scan for a graph: built here, or, if large, on a thread while searches scan int8
        copies of the rows (a quarter of the float32 matrix, which is dropped)."""
        if self._matrix is not None:
            if self.read is None or self.indexed < self.background_rows:
                self._build_graph()
                return
            self._int8 = Int8Rows(self.dim)
            self._int8.grow(len(self._has))
            seqs = np.flatnonzero(self._has)
            for start in range(0, len(seqs), PAGE):
                chunk = seqs[start : start + PAGE]
                self._int8.put(chunk, self._matrix[chunk])
            self._matrix = None
        assert self.read is not None
        log.info("vector index: building the graph in the background; searches scan the rows meanwhile")
        self._build = GraphBuild(self.dim, self.read)
        self._build.start()

    def _take_built_graph(self) -> None:
        """Search the graph a background build made from here on, if it finished.

        The graph holds the rows with a vector among those whose latest change is at or below the
        build's counter value (``store/graph_build.py``); this index knows every row's state up to its
        own. From the lower of the two, rows are read again and brought into the graph as any change is.
        """
        assert self._build is not None
        build, self._build = self._build, None
        if build.result is None:
            return  # failed or stopped: the next refresh starts another
        graph, built_at = build.result
        keys = graph.keys()
        if len(keys):
            self._grow(int(keys.max()) + 1)
        self._has[:] = False
        self._has[keys] = True
        self._graph, self._int8 = graph, None
        self.watermark = min(self.watermark, built_at)
        self._masks.clear()
        self._unsaved = len(keys)  # saved at the next refresh outside a write, caught up first

    def _build_graph(self) -> None:
        """Leave the exact scan: put every vector in a graph and drop the matrix."""
        assert self._matrix is not None
        graph = Graph(self.dim)
        seqs = np.flatnonzero(self._has)
        for start in range(0, len(seqs), PAGE):
            chunk = seqs[start : start + PAGE]
            graph.add(chunk, self._matrix[chunk])
        self._graph, self._matrix = graph, None
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
        """Rows the filter keeps, by seq; cached per filter and updated row by row as changes arrive."""
        mask = self._masks.get(flt)
        if mask is None:
            if len(self._masks) >= 64:
                self._masks.clear()
            mask = self._masks[flt] = self._matches(flt, slice(None))
        return mask

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
            if self._graph is None or population <= self.exact_filter_rows:
                return self._scan(vectors, mask, want, floor)
            fetch = _fetch_for(want, population / max(self.indexed, 1))
            keys, sims = self._graph.search(vectors, fetch)
            results: list[list[tuple[int, float]] | None] = []
            for row_keys, row_sims in zip(keys, sims, strict=True):
                results.append(self._kept(row_keys, row_sims, mask, want, floor - SIMILARITY_SLACK, fetch))
            for n, found in enumerate(results):
                if found is None:
                    results[n] = self._widen(vectors[n], mask, want, floor, fetch)
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
        expansion: int | None = None,
        known: Sequence[tuple[int, int]] = (),
    ) -> list[np.ndarray]:
        """For each vector, the rows the filter keeps that may be among its ``count`` most similar above
        ``floor`` once scored exactly: seqs, most similar first by the index's scores.

        Those are the first ``count`` by the index's scores and every other one whose score is within
        the scores' error of the last of them (exact scores: a tie; int8 scores: ``TIE_MARGIN``); a
        caller wanting ``count`` neighbours scores only these exactly, not a fixed over-fetch.

        ``walk``: the hits a graph walk returns at first (more when the filter keeps few rows; None: as
        for a search of ``count`` rows); ``expansion``: the candidates it keeps on the way (at least
        ``walk``; None: the graph's own walk).

        ``known`` are (vector, seq) rows the caller knows of, such as a subject's own row it leaves
        out. A graph walk that did not return a known row the filter keeps and that scores above the
        walk's cut went past part of the neighbourhood (measured at 100k memories: 8 walks of 3,000 did
        not reach their own subject, and 7 of those missed true neighbours): that walk goes again, wider.
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
            if self._graph is None or population <= self.exact_filter_rows:
                return [
                    _nearest(*_columns(hits), count, TIE_MARGIN) for hits in self._scan(vectors, mask, count, floor)
                ]
            selectivity = population / max(self.indexed, 1)
            fetch = (
                _fetch_for(count, selectivity)
                if walk is None
                else int(min(MAX_FETCH, max(walk, count / selectivity * 1.5)))
            )
            return self._walk_many(
                vectors, mask, count, floor, threads, fetch, expansion, self._probes(vectors, mask, known)
            )

    def _probes(self, vectors: np.ndarray, mask: np.ndarray, known: Sequence[tuple[int, int]]) -> np.ndarray:
        """The known rows a walk should find: (vector, seq, the graph's score) of those the filter keeps."""
        assert self._graph is not None
        rows = np.array([(n, seq) for n, seq in known if 0 <= seq < len(mask) and mask[seq]], dtype=np.int64)
        if len(rows) == 0:
            return np.zeros((0, 3))
        rows = rows[self._graph.contains(rows[:, 1])]
        stored = self._graph.vectors(rows[:, 1])
        # The graph's cosine: its int8 rows read back are not of unit length (about 0.92).
        norms = np.maximum(np.linalg.norm(stored, axis=1) * np.linalg.norm(vectors[rows[:, 0]], axis=1), 1e-12)
        scores = np.einsum("ij,ij->i", stored, vectors[rows[:, 0]]) / norms
        return np.column_stack([rows, scores])

    def _walk_many(
        self,
        vectors: np.ndarray,
        mask: np.ndarray,
        count: int,
        floor: float,
        threads: int,
        fetch: int,
        expansion: int | None,
        probes: np.ndarray,
    ) -> list[np.ndarray]:
        assert self._graph is not None
        found: list[np.ndarray] = [np.zeros(0, dtype=np.int64)] * len(vectors)
        pending = np.arange(len(vectors))
        while len(pending):
            keys, sims = self._graph.search(vectors[pending], fetch, threads=threads, expansion=expansion)
            near, cut, short = self._near(keys, sims, mask, count, floor)
            rows = np.split(keys[near], np.cumsum(near.sum(axis=1))[:-1])
            for n, seqs in zip(pending.tolist(), rows, strict=True):
                found[n] = seqs
            for at in np.flatnonzero(short):
                hits = self._widen(vectors[pending[at]], mask, count, floor, fetch)
                found[pending[at]] = _nearest(*_columns(hits), count, TIE_MARGIN)
            again = _missed(pending, keys, cut, probes) & ~short
            pending = pending[again] if fetch < MAX_FETCH else pending[:0]
            fetch = min(fetch * 4, MAX_FETCH)
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

    def _widen(
        self, vector: np.ndarray, mask: np.ndarray, want: int, floor: float, fetch: int
    ) -> list[tuple[int, float]]:
        assert self._graph is not None
        while fetch < MAX_FETCH:
            fetch = min(fetch * 4, MAX_FETCH)
            keys, sims = self._graph.search(vector, fetch)
            found = self._kept(keys[0], sims[0], mask, want, floor - SIMILARITY_SLACK, fetch)
            if found is not None:
                return found
        return self._scan(vector[None, :], mask, want, floor)[0]

    def _scan(self, vectors: np.ndarray, mask: np.ndarray, want: int, floor: float) -> list[list[tuple[int, float]]]:
        """Score every row the mask keeps from its int8 copy (the graph's, or the rows kept while a graph
        is built): each vector's most similar rows above the floor less the slack, twice as many as wanted
        (the scores are approximate), most similar first."""
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
        assert self._graph is not None
        # The graph's int8 rows read back are not of unit length (usearch truncates: about 0.93): its
        # cosine, not the raw product, or every score would be 7 % low and rows just above a floor lost.
        stored = self._graph.vectors(seqs)
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
    return [(int(i), float(row[i])) for i in above]


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


def _fetch_for(want: int, selectivity: float) -> int:
    """How many graph neighbours to ask for so that ``want`` of them likely pass a filter."""
    # Twice the candidates wanted: the benchmark corpus has dense clusters of near-duplicates, where a
    # narrower search misses some of the exact top ten (recall@10 0.974 at 1.25×, 0.988 at 2×).
    return int(min(MAX_FETCH, max(want * 2, want / max(selectivity, 1e-6) * 1.5) + 16))


def _moved(graph: Graph | None, seq: int, vector: np.ndarray) -> bool:
    """Whether a row's new vector differs from the graph's copy by more than int8 rounding."""
    if graph is None:
        return True
    stored = graph.vectors(np.array([seq]))
    if len(stored) == 0:
        return True
    return float(stored[0] @ vector) < 0.99 * float(np.linalg.norm(vector))


def _gone(seq: int) -> Row:
    """A row that no longer exists: nothing to find."""
    return (seq, "", "", "", False, None, 0)
