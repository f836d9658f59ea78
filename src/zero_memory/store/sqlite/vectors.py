"""Vector search on the SQLite store: the index proposes, the transaction's rows decide.

Each candidate the index proposes is read back in the caller's transaction
and kept only if that row is live, of the owner, in the scopes and of the
kinds asked for, and not excluded; its similarity is computed from the row's
float32 vector. The index also reads its catch-up rows through here.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from concurrent.futures import wait
from typing import Any, TypeVar

import numpy as np

from zero_memory.domain.memory import Memory
from zero_memory.store.ports.search import BriefNeighbour, Neighbour
from zero_memory.store.rows import MEMORY_COLUMNS, marks, memory_from_row
from zero_memory.store.sqlite.recall_rows import CHUNK, RecallRows, usable
from zero_memory.store.sqlite.vector_index import Filter, Row, State, VectorIndex

T = TypeVar("T")

# The sweep's search asks the clusters for 16 hits at first and scans a sixth of the clusters a recall
# scans (``Clusters.narrow_probes``): its subjects are stored memories, whose own neighbours lie in the
# clusters nearest them (docs/benchmarks-archive.md, "Hygiene sweep"); a search that misses its own subject goes
# again, wider.
SWEEP_WALK = 16
SWEEP_THREADS = 2  # the batch's searches on both cores
# From this many indexed rows recall reads its full text on another thread while the clusters are scanned;
# below, one after the other. Measured with fixed_cost.py beside the code reading them one after the other
# (quiet machine): recall without its embedding 1.71 against 1.63 ms at 10,000 memories, 1.75 against 1.97
# at 30,000, 1.81 against 2.17 at 50,000 (0.1-0.2 ms more CPU a recall); with both cores busy with other
# work, within the noise at 50,000 (2.21 and 2.37 against 2.36 and 2.30 ms).
BESIDE_MIN_ROWS = 20_000
# Similarities further apart than this (more than a millionth) differ to six decimals.
TIE_GAP = 2e-6


class SQLiteVectors(RecallRows):
    """Mixed into ``SQLiteTx``: ``conn``, ``index`` and what ``RecallRows`` asks for come from it."""

    conn: Any
    dim: int

    @property
    def index(self) -> VectorIndex:
        raise NotImplementedError

    # -- what the index reads ---------------------------------------------------------

    def changed_rows(self, after_rev: int, limit: int) -> list[Row]:
        # Removed rows (account deletion, migration 0013) come as rows with no vector: the index drops them.
        cursor = self.conn.execute(
            "SELECT seq, owner, scope, kind, status, embedding, rev FROM memories WHERE rev > ? "
            "UNION ALL SELECT seq, '', '', '', 'removed', NULL, rev FROM memory_removals WHERE rev > ? "
            "ORDER BY rev LIMIT ?",
            (after_rev, after_rev, limit),
        )
        return [(r[0], r[1], r[2], r[3], r[4] == "live", r[5], r[6]) for r in cursor.fetchall()]

    def rows_by_seq(self, seqs: Collection[int]) -> list[Row]:
        rows: list[Row] = []
        ordered = sorted(seqs)
        for start in range(0, len(ordered), CHUNK):
            chunk = ordered[start : start + CHUNK]
            cursor = self.conn.execute(
                "SELECT seq, owner, scope, kind, status, embedding, rev FROM memories "
                f"WHERE seq IN ({marks(len(chunk))})",
                chunk,
            )
            rows += [(r[0], r[1], r[2], r[3], r[4] == "live", r[5], r[6]) for r in cursor.fetchall()]
        return rows

    def row_states(self, after_seq: int, limit: int) -> list[State]:
        # By the index of these columns (migration 0027): the planner would walk the table by seq, reading each
        # row's vector on the way to the columns after it.
        cursor = self.conn.execute(
            "SELECT seq, owner, scope, kind, status, embedding_dim, embedding IS NOT NULL, rev "
            "FROM memories INDEXED BY memories_row_states WHERE seq > ? ORDER BY seq LIMIT ?",
            (after_seq, limit),
        )
        dim = self.dim
        return [(r[0], r[1], r[2], r[3], r[4] == "live", bool(r[6]) and r[5] == dim, r[7]) for r in cursor.fetchall()]

    def anchor(self, watermark: int) -> tuple[int, str] | None:
        row = self.conn.execute(
            "SELECT rev, id FROM memories WHERE rev <= ? ORDER BY rev DESC LIMIT 1", (watermark,)
        ).fetchone()
        return (int(row[0]), str(row[1])) if row else None

    def anchor_holds(self, watermark: int, anchor_rev: int, anchor_id: str) -> bool:
        """Whether a snapshot made at ``watermark`` belongs to this database's history."""
        counter = self.conn.execute("SELECT value FROM counters WHERE name = 'rev'").fetchone()
        if counter is None or int(counter[0]) < watermark:
            return False
        row = self.conn.execute("SELECT rev FROM memories WHERE id = ?", (anchor_id,)).fetchone()
        return row is not None and (int(row[0]) == anchor_rev or int(row[0]) > watermark)

    def can_save(self) -> bool:
        """A snapshot is saved only from a transaction with no writes of its own (they might roll back)."""
        return self.read_only()

    # -- search -------------------------------------------------------------------------

    def similar(
        self,
        vector: np.ndarray,
        *,
        floor: float,
        limit: int,
        scopes: Collection[str] | None = None,
        owner: str | None = None,
        exclude: Collection[str] = (),
        kinds: Collection[str] | None = None,
    ) -> list[Neighbour]:
        if limit <= 0:
            return []
        flt = Filter.of(scopes, owner, kinds)
        index = self.index
        index.refresh(self)
        hits = index.candidates(vector, flt, want=_want(limit, len(exclude)), floor=floor)
        return [
            Neighbour(memory_from_row(row), similarity)
            for row, similarity in self._verified(vector, hits, flt, exclude, floor, limit, MEMORY_COLUMNS)
        ]

    def vector_search(
        self, *, floor: float, limit: int, scopes: Collection[str] | None = None, kinds: Collection[str] | None = None
    ) -> IndexSearch:
        self.index.refresh(self)
        return IndexSearch(self, Filter.of(scopes, None, kinds), floor, limit)

    def similar_many(
        self, vectors: np.ndarray, *, floor: float, limit: int, owner: str, excludes: list[Collection[str]]
    ) -> list[list[Neighbour]]:
        """The sweep's search: each vector's ``limit`` nearest live rows of the owner above the floor.

        The index ranks by its own (int8) scores and proposes, for each vector, only the rows that can
        make the cut once scored exactly (``VectorIndex.nearest_many``); the excluded rows are dropped
        before anything is read; the rest, for every vector of the batch, are read in one statement
        that applies the filters as this transaction sees them, and scored from their float32 vectors.
        """
        if limit <= 0 or len(vectors) == 0:
            return [[] for _ in range(len(vectors))]
        vectors = np.asarray(vectors, dtype=np.float32)
        flt = Filter.of(None, owner)
        index = self.index
        index.refresh(self)
        most = max((len(e) for e in excludes), default=0)
        excluded = self._seqs_of(excludes)
        near = index.nearest_many(
            vectors,
            flt,
            count=limit + most,
            floor=floor,
            threads=SWEEP_THREADS,
            walk=SWEEP_WALK,
            narrow=True,
            known=excluded,
        )
        seqs = np.concatenate(near)
        subjects = np.repeat(np.arange(len(near)), [len(found) for found in near])
        seqs, subjects = _without_excluded(seqs, subjects, excluded)
        rows = _Rows(self._passing_rows(np.unique(seqs), flt), self.dim)
        at, present = rows.find(seqs)
        seqs, subjects, at = seqs[present], subjects[present], at[present]
        similarities = np.einsum("ij,ij->i", rows.matrix[at], vectors[subjects]).astype(np.float64)
        above = similarities >= floor
        subjects, at, similarities = subjects[above], at[above], similarities[above]
        # Each subject's hits by similarity, equal ones (to six decimals: BLAS may round two identical
        # rows differently in the last bit) in id order, as ``_verified`` orders them; its first ``limit``.
        order = np.lexsort((rows.id_rank[at], -np.round(similarities, 6), subjects))
        subjects, at, similarities = subjects[order], at[order], similarities[order]
        first = np.searchsorted(subjects, subjects, side="left")
        kept = np.arange(len(subjects)) - first < limit
        found: list[list[Neighbour]] = [[] for _ in range(len(vectors))]
        for n, row, similarity in zip(
            subjects[kept].tolist(), at[kept].tolist(), similarities[kept].tolist(), strict=True
        ):
            found[n].append(Neighbour(rows.memory(row), similarity))
        return found

    def _seqs_of(self, excludes: list[Collection[str]]) -> list[tuple[int, int]]:
        """(search, seq) of each search's excluded memories that exist."""
        ids = sorted({memory_id for excluded in excludes for memory_id in excluded})
        if not ids:
            return []
        seq_of: dict[str, int] = {}
        for start in range(0, len(ids), CHUNK):
            chunk = ids[start : start + CHUNK]
            seq_of.update(self.conn.execute(f"SELECT id, seq FROM memories WHERE id IN ({marks(len(chunk))})", chunk))
        return [(n, seq_of[i]) for n, excluded in enumerate(excludes) for i in excluded if i in seq_of]

    def _passing_rows(self, seqs: np.ndarray, flt: Filter) -> tuple[list[str], list[tuple[Any, ...]]]:
        """(column names, rows) of the rows that pass the filter now, by seq: one statement."""
        if len(seqs) == 0:
            return [], []
        where, params = self._filter_sql(flt)
        # NOT INDEXED: looked up by seq (the rowid), as in ``_passing``.
        cursor = self.conn.execute(
            f"SELECT seq, embedding, {MEMORY_COLUMNS} FROM memories NOT INDEXED "
            f"WHERE seq IN ({marks(len(seqs))}) AND {where}",
            [*seqs.tolist(), *params],
        )
        return [d[0] for d in cursor.description], cursor.fetchall()

    def _verified(
        self,
        vector: np.ndarray,
        hits: list[tuple[int, float]],
        flt: Filter,
        exclude: Collection[str],
        floor: float,
        limit: int,
        columns: str,
    ) -> list[tuple[dict[str, Any], float]]:
        """The candidates that pass every filter as this transaction sees them, scored exactly: their rows
        (``columns``) and similarities.

        The filters are applied by SQLite to the candidates' rows, read whole
        with their vectors in one go: they are few, the first of the clusters'
        hits in their own order (``_want``), and most of them make the cut.
        """
        names, rows = self._passing({seq for seq, _ in hits}, flt, columns)
        id_at = names.index("id") if names else 0
        excluded = set(exclude)
        seqs = [seq for seq, _ in hits if seq in rows and rows[seq][id_at] not in excluded]
        if not seqs:
            return []
        scored = _scored(vector, [rows[seq][1] for seq in seqs], [rows[seq][id_at] for seq in seqs], floor, self.dim)
        return [(dict(zip(names, rows[seqs[at]], strict=True)), similarity) for similarity, _, at in scored[:limit]]

    def verified_briefs(
        self, vector: np.ndarray, hits: list[tuple[int, float]], flt: Filter, floor: float, limit: int
    ) -> list[BriefNeighbour]:
        """``_verified`` as briefs, the rows read through the row cache (``store/sqlite/recall_rows.py``)
        and filtered as ``_filter_sql`` does."""
        seqs = [seq for seq, _ in hits]
        briefs, blobs = usable(self.cached_rows(seqs), seqs, flt.scopes, flt.kinds, flt.owner, self.dim)
        if not briefs:
            return []
        scored = _scored(vector, blobs, [brief.id for brief in briefs], floor, self.dim)
        return [BriefNeighbour(briefs[at], similarity) for similarity, _, at in scored[:limit]]

    def _passing(self, seqs: set[int], flt: Filter, columns: str) -> tuple[list[str], dict[int, tuple[Any, ...]]]:
        """The column names, and the rows (seq, vector, ``columns``) of the candidates that pass the filter
        now, by seq."""
        where, params = self._filter_sql(flt)
        names: list[str] = []
        found: dict[int, tuple[Any, ...]] = {}
        ordered = sorted(seqs)
        size = 4 * self.dim
        for start in range(0, len(ordered), CHUNK):
            chunk = ordered[start : start + CHUNK]
            # NOT INDEXED: the rows are looked up by seq (the rowid). Given a long IN list and an owner,
            # SQLite's planner otherwise walks the owner's index whole for every chunk (measured: 24,000
            # candidates of one owner at 100k memories took 5.5 s that way, 0.5 s by rowid).
            cursor = self.conn.execute(
                f"SELECT seq, embedding, {columns} FROM memories NOT INDEXED "
                f"WHERE seq IN ({marks(len(chunk))}) AND {where}",
                [*chunk, *params],
            )
            names = [d[0] for d in cursor.description]
            found.update(
                (values[0], values) for values in cursor.fetchall() if values[1] is not None and len(values[1]) == size
            )
        return names, found

    def _filter_sql(self, flt: Filter) -> tuple[str, list[Any]]:
        """The filter as a WHERE clause over ``memories``: live, a vector of this dimension, and the rest."""
        where = ["status = 'live'", "embedding_dim = ?"]
        params: list[Any] = [self.dim]
        if flt.owner is not None:
            where.append("owner = ?")
            params.append(flt.owner)
        if flt.scopes is not None:
            where.append(f"scope IN ({marks(len(flt.scopes))})")
            params += sorted(flt.scopes)
        if flt.kinds is not None:
            where.append(f"kind IN ({marks(len(flt.kinds))})")
            params += sorted(flt.kinds)
        return " AND ".join(where), params


def _scored(
    vector: np.ndarray, blobs: list[bytes], ids: list[str], floor: float, dim: int
) -> list[tuple[float, str, int]]:
    """(similarity, id, position) of the rows (their float32 vectors' bytes) at or above the floor, best first,
    equal ones in id order."""
    matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dim)
    # Row by row, each summed in the same order: BLAS's matrix-vector product rounds identical rows
    # differently by where they sit in the matrix (measured: most products of a few identical 16- to
    # 512-dimension rows), so equal memories came out unequal and not in id order.
    similarities = np.einsum("ij,j->i", matrix, np.asarray(vector, dtype=np.float32))
    kept = np.flatnonzero(similarities >= floor)
    kept = kept[np.argsort(-similarities[kept], kind="stable")]
    ordered = similarities[kept]
    scored = [(similarity, ids[at], at) for similarity, at in zip(ordered.tolist(), kept.tolist(), strict=True)]
    # Equal similarities come in id order, as on PostgreSQL, not in index order; equal to six
    # decimals, since BLAS may round two identical rows of one product differently in the last bit. Sorted by
    # similarity, the rows equal to six decimals lie in runs of neighbours at most a millionth apart: only
    # those runs are sorted again, by the rounded similarity and the id (rounding each of a hundred
    # similarities was half of this function).
    apart = np.flatnonzero(ordered[:-1] - ordered[1:] > TIE_GAP) + 1
    start = 0
    for end in [*apart.tolist(), len(scored)]:
        if end - start > 1:
            scored[start:end] = sorted(scored[start:end], key=lambda hit: (-round(hit[0], 6), hit[1]))
        start = end
    return scored


class IndexSearch:
    """A search of the index, caught up in the transaction: the index (in memory) is searched on this thread
    after ``beside`` reads the transaction or, in a large index, while it reads it on one of the index's
    threads; the rows it proposes are then read and scored in the transaction."""

    def __init__(self, tx: SQLiteVectors, flt: Filter, floor: float, limit: int) -> None:
        self._tx, self._flt, self._floor, self._limit = tx, flt, floor, limit

    def run(self, vector: Callable[[], np.ndarray], beside: Callable[[], T]) -> tuple[list[BriefNeighbour], T]:
        if self._limit <= 0:
            return [], beside()
        index = self._tx.index
        want = _want(self._limit, 0)
        if not index.uses_clusters or index.indexed < BESIDE_MIN_ROWS:
            # The exact scan is one numpy product of well under a millisecond at a few thousand rows: a
            # thread beside it only made each wait for the GIL behind the other (measured at 1,000
            # memories: 6.8 ms p50 for the scan with the full text read beside it). A small index's
            # clusters too: their scan and the full text (its postings and rows kept in memory) are each a
            # few tenths of a millisecond, less than the hand-off costs (``BESIDE_MIN_ROWS``). Read first:
            # the query may still be embedded in the query process meanwhile.
            other_value = beside()
            query = np.asarray(vector(), dtype=np.float32)
            hits = index.candidates(query, self._flt, want=want, floor=self._floor)
            return self._tx.verified_briefs(query, hits, self._flt, self._floor, self._limit), other_value
        # The clusters' scan (faiss, C++, without the GIL) runs on this thread while ``beside`` reads the
        # transaction (its connection used by one thread at a time): the scan holds the GIL only to start and
        # to end, so the reads beside it start at once, and it goes on as soon as it ends. With the scan
        # beside and the reads here they waited for the GIL behind each other (docs/benchmarks-archive.md,
        # "The graph: recall at 100,000 memories, the walk on the caller's thread, each row read once").
        other = index.beside(beside)
        try:
            query = np.asarray(vector(), dtype=np.float32)  # perhaps still embedded in the query process
            hits = index.candidates(query, self._flt, want=want, floor=self._floor)
        finally:
            wait([other])  # the reads use this transaction: they do not outlive it, nor overlap what follows
        return self._tx.verified_briefs(query, hits, self._flt, self._floor, self._limit), other.result()


def _want(limit: int, excluded: int) -> int:
    """Rows a search reads and scores exactly: the first of the clusters' hits in their (8-bit) order.

    The clusters a search scans are as many whatever the count; the margin is for excluded rows and for
    that order misplacing near-ties at the edge (measured at 100k memories with int8 scores of the same
    precision, recall's pool of 60: the int8 top 60 holds 0.89 of the exact top 60 for paraphrase
    queries, the top 90 0.99, the top 120 0.998; the exact top ten are within the first 20)."""
    return limit + excluded + max(8, limit // 2)


def _without_excluded(
    seqs: np.ndarray, searches: np.ndarray, excluded: list[tuple[int, int]]
) -> tuple[np.ndarray, np.ndarray]:
    """The (seq, search) hits whose seq is not one its search excludes."""
    if not excluded or len(seqs) == 0:
        return seqs, searches
    width = int(max(int(seqs.max()), max(seq for _, seq in excluded))) + 1
    pairs = np.array([n * width + seq for n, seq in excluded], dtype=np.int64)
    keep = ~np.isin(searches.astype(np.int64) * width + seqs, pairs)
    return seqs[keep], searches[keep]


class _Rows:
    """Rows read for a batch of searches: their vectors as one matrix, memories made on demand."""

    def __init__(self, read: tuple[list[str], list[tuple[Any, ...]]], dim: int) -> None:
        names, values = read
        usable = [row for row in values if row[1] is not None and len(row[1]) == 4 * dim]
        usable.sort(key=lambda row: row[0])
        self.names = names
        self.values = usable
        self.seqs = np.array([row[0] for row in usable], dtype=np.int64)
        self.matrix = np.frombuffer(b"".join(row[1] for row in usable), dtype=np.float32).reshape(len(usable), dim)
        id_at = names.index("id") if names else 0
        self.id_rank = np.argsort(np.argsort(np.array([row[id_at] for row in usable], dtype=str), kind="stable"))
        self._memories: dict[int, Memory] = {}

    def find(self, seqs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(row of each seq, whether it was read)."""
        if len(self.seqs) == 0:
            return np.zeros(len(seqs), dtype=np.int64), np.zeros(len(seqs), dtype=bool)
        at = np.minimum(np.searchsorted(self.seqs, seqs), len(self.seqs) - 1)
        return at, self.seqs[at] == seqs

    def memory(self, row: int) -> Memory:
        found = self._memories.get(row)
        if found is None:
            found = self._memories[row] = memory_from_row(dict(zip(self.names, self.values[row], strict=True)))
        return found
