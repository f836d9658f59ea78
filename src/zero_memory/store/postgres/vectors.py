"""Vector search on PostgreSQL: pgvector's HNSW index, or an exact scan of few candidates.

Why the vector column has no fixed dimension: the store's dimension follows
the embedding model, and a re-embedding to another model must be able to write
vectors of a new size beside the old ones. The HNSW index is therefore an
expression index on ``embedding::vector(DIM)`` limited to ``embedding_dim =
DIM`` (pgvector's documented recipe for mixed dimensions); ``migrate()`` makes
it for the store's dimension, and ``similar`` spells the same expression and
predicate, with DIM as a literal, so the planner can use it. When few rows pass
a search's filters (``exact_search_rows``), ``similar`` skips the index and
compares with every one of them, so small scopes get exact answers, as on SQLite.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import numpy as np
import psycopg
from pgvector import Vector
from psycopg import IsolationLevel

from zero_memory import errors
from zero_memory.domain.memory import Memory
from zero_memory.store.ports.search import BriefNeighbour, Neighbour
from zero_memory.store.rows import BRIEF_COLUMNS, brief_from_row
from zero_memory.store.sql import MEMORY_COLUMNS, memory_from_row

T = TypeVar("T")
R = TypeVar("R")


# Up to this many candidate rows (live, of the store's dimension, passing the
# scope and owner filters), similar() compares the query with every one of them
# instead of walking the HNSW graph: exact, and a few milliseconds. Each search
# first counts its candidates up to this bound, and each vector is stored out of
# line (TOAST, ~3 page reads a row): at 10,000 the count alone took ~7 ms and an
# exact search ~30-90 ms, where the HNSW walk takes a few; an iterative scan
# (pgvector 0.8) keeps a filtered walk from starving, so a small scope among
# many rows of other scopes still gets its rows (tests/store/test_pg_filtered_search.py).
EXACT_SEARCH_ROWS = 2_000

# A sweep's batch of at least twice this many subjects is searched on two connections at once.
SPLIT_MIN_SUBJECTS = 16

# The HNSW candidate list: it grows with the limit asked for.
EF_SEARCH_MIN = 64
EF_SEARCH_MAX = 1000
# The sweep's candidate list, for its few nearest rows a subject (a cap of 3, 6 fetched): SWEEP_EF_SEARCH_MIN
# instead of 64 found the same four nearest of 1,000 subjects at 100,000 memories in about half the server's
# time, and 0.9912 of the exact scan's pairs for 10,000 subjects where 64 found 0.9946
# (docs/benchmarks-archive.md, "PostgreSQL: the sweep's shorter candidate list, recall's search reading briefs").
SWEEP_EF_SEARCH_MIN = 24
# The rows a sweep's scan fetches beyond a subject's cut and its excluded rows. An index scan's first
# ef_search candidates come back in their exact order (relaxed order only lets a later iteration's rows come
# after nearer ones), so a scan of fewer rows than ef_search needs no margin for misplaced rows; this one is
# for rows that fail the filters meanwhile. A subject whose cut ties with the farthest row fetched is
# scanned again for SWEEP_TIES more rows: the tied rows are taken in id order, as the exact scan takes them.
SWEEP_MARGIN = 2
SWEEP_TIES = 8


# The settings of an approximate scan, for the rest of the transaction, until USED_INDEX: an iterative scan
# keeps a filtered walk from starving (filters applied after the index scan), and sorting is off because
# the planner's costs leave out reading each vector out of line, so up to a few tens of thousands of rows
# it sorts them all rather than walk the graph (measured at 10,000 memories: 250-400 ms that way, 75 ms
# through the index). An exact search has no plan but a sort, which it keeps. zm.sort keeps the setting
# sorting had.
USE_INDEX = (
    "SELECT set_config('zm.sort', current_setting('enable_sort'), true), "
    "set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', %s, true), "
    "set_config('enable_sort', 'off', true)"
)
USED_INDEX = "SELECT set_config('enable_sort', current_setting('zm.sort'), true)"


def ef_search(fetch: int, least: int = EF_SEARCH_MIN) -> int:
    """The HNSW candidate list for ``fetch`` rows."""
    return min(EF_SEARCH_MAX, max(least, 2 * fetch))


def _tied_at_the_edge(kept: list[tuple[float, str]], scored: list[tuple[float, str]], limit: int, fetch: int) -> bool:
    """Whether a full cut (``kept``: negated similarities and ids) ends on a row as far as the farthest of a
    scan that stopped at its limit (``fetch`` rows, ``scored``): rows beyond it may tie with it."""
    if len(kept) < limit or len(scored) < fetch:
        return False
    return round(-kept[-1][0], 6) <= round(min(similarity for similarity, _ in scored), 6)


class SearchedStore(Protocol):
    """What the search reads of ``PostgresStore``: its dimension and bound, the memo of filters that walked the
    index lately, and other connections that take up a snapshot."""

    dim: int
    exact_search_rows: int

    def walked_lately(self, key: tuple[Any, ...]) -> bool: ...
    def note_walk(self, key: tuple[Any, ...]) -> None: ...
    def forget_walk(self, key: tuple[Any, ...]) -> None: ...
    def in_snapshot(
        self, snapshot: Snapshot, work: Callable[[psycopg.Connection[dict[str, Any]], T], R], arg: T
    ) -> R: ...


class PostgresVectors:
    """Mixed into ``PostgresTx``: ``store`` and ``conn`` come from it."""

    store: SearchedStore
    _conn: psycopg.Connection[dict[str, Any]]
    # Called by ``text_briefs`` once its rows are read, before it makes briefs of them: ``BriefSearch.run``
    # sends its search then.
    _rows_read: Callable[[], None] | None = None
    # While a search sent by ``BriefSearch`` is not yet fetched: the connection is in pipeline mode, where a
    # statement's result is there only once fetched, and reading it is refused.
    _in_flight = False

    @property
    def conn(self) -> psycopg.Connection[dict[str, Any]]:
        """The transaction's connection."""
        if self._in_flight:
            raise errors.internal("the transaction was read while recall's vector search was in flight")
        return self._conn

    def _embedding_param(self, vector: np.ndarray) -> Any:
        return Vector(np.ascontiguousarray(vector, dtype=np.float32))

    def _vector_from_value(self, value: Any) -> np.ndarray:
        if isinstance(value, Vector):
            return value.to_numpy().copy()
        return np.asarray(value, dtype=np.float32)

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
        found = self._nearest(
            vector, MEMORY_COLUMNS, floor=floor, limit=limit, scopes=scopes, owner=owner, exclude=exclude, kinds=kinds
        )
        return [Neighbour(memory_from_row(row), similarity) for row, similarity in found]

    def _nearest(
        self,
        vector: np.ndarray,
        columns: str,
        *,
        floor: float,
        limit: int,
        scopes: Collection[str] | None = None,
        owner: str | None = None,
        exclude: Collection[str] = (),
        kinds: Collection[str] | None = None,
    ) -> list[tuple[dict[str, Any], float]]:
        """``similar``'s answer as rows of ``columns``, each with its similarity, most similar first."""
        return self._nearest_of(Nearest(vector, columns, floor, limit, scopes, owner, exclude, kinds))

    def _nearest_of(self, nearest: Nearest) -> list[tuple[dict[str, Any], float]]:
        if nearest.empty:
            return []
        with self.conn.pipeline():  # one round trip: the settings of an index scan, the search, sorting as it was
            cursor = self._send_nearest(nearest)
        return self._finish_nearest(nearest, cursor)

    def _send_nearest(self, nearest: Nearest, walked: bool | None = None) -> psycopg.Cursor[dict[str, Any]]:
        """Send the search (the caller's pipeline sends its three statements at once): the walk alone if the
        filters walked the index lately (``walked`` None), else as the candidates' count decides."""
        if walked is None:
            walked = self.store.walked_lately(nearest.key)
        nearest.walked = walked
        query, params = self._similar_query(
            nearest.vector,
            fetch=nearest.fetch,
            scopes=nearest.scopes,
            owner=nearest.owner,
            exclude=nearest.exclude,
            kinds=nearest.kinds,
            walked=walked,
            columns=nearest.columns,
        )
        self._conn.execute(USE_INDEX, (str(ef_search(nearest.fetch)),))
        cursor = self._conn.execute(query, params)
        self._conn.execute(USED_INDEX)
        return cursor

    def _finish_nearest(
        self, nearest: Nearest, cursor: psycopg.Cursor[dict[str, Any]]
    ) -> list[tuple[dict[str, Any], float]]:
        """The rows of a search sent, scored: ``_nearest``'s answer."""
        rows = cursor.fetchall()
        if nearest.walked and len(rows) < nearest.fetch:
            # A walk that came back short: few rows pass the filters now (the scopes shrank since they were
            # last counted) or the iterative scan gave up on them. Counted again, they may be searched exactly.
            with self._conn.pipeline():
                cursor = self._send_nearest(nearest, walked=False)
            rows = cursor.fetchall()
        if rows and rows[0]["walked"]:
            self.store.note_walk(nearest.key)
        else:
            self.store.forget_walk(nearest.key)
        scored = [(r, 1.0 - float(r["distance"])) for r in rows]
        scored = [(r, similarity) for r, similarity in scored if similarity >= nearest.floor]
        scored.sort(key=lambda pair: (-pair[1], pair[0]["id"]))
        return scored[: nearest.limit]

    def vector_search(
        self, *, floor: float, limit: int, scopes: Collection[str] | None = None, kinds: Collection[str] | None = None
    ) -> BriefSearch:
        """The search is one statement on the transaction's connection: it runs when its neighbours are read."""
        return BriefSearch(self, floor, limit, scopes, kinds)

    def similar_many(
        self, vectors: np.ndarray, *, floor: float, limit: int, owner: str, excludes: list[Collection[str]]
    ) -> list[list[Neighbour]]:
        """The sweep's search: one statement for a batch of subjects, each its own nearest-neighbour scan.

        Each subject's neighbours come from a LATERAL subquery, the same scan ``similar`` makes (through
        the HNSW index with an iterative scan, or exact under the bound, decided once for the batch:
        every subject has the same filter); the excluded rows are dropped here, so each scan fetches
        that many more. The scans return ids and distances only, above the floor; the memories that
        make a subject's cut are read afterwards, in one statement for the batch (building every
        fetched row's memory, 12 a subject, cost more than the scans' answers).
        """
        if limit <= 0 or len(vectors) == 0:
            return [[] for _ in range(len(vectors))]
        dim = int(self.store.dim)
        if vectors.ndim != 2 or vectors.shape[1] != dim:
            raise ValueError(f"similar_many: expected vectors of {dim} dimensions, got shape {vectors.shape}")
        fetch = limit + max((len(e) for e in excludes), default=0) + SWEEP_MARGIN
        filters = f"status = 'live' AND embedding_dim = {dim} AND owner = %s"
        key = (None, owner, None)  # the memo's key for these filters, as similar() makes it
        walk = self.store.walked_lately(key) or self._candidates(filters, [owner]) > self.store.exact_search_rows
        if walk:
            self.store.note_walk(key)
        distance = f"embedding::vector({dim}) <=> q.q_vector::vector({dim})" if walk else "embedding <=> q.q_vector"
        query = (
            f"SELECT q.q_n, m.id, m.distance FROM unnest(%b::vector[]) WITH ORDINALITY AS q(q_vector, q_n) "
            f"CROSS JOIN LATERAL (SELECT id, {distance} AS distance FROM memories "
            f"WHERE {filters} ORDER BY distance LIMIT %s) AS m WHERE m.distance <= %s"
        )

        def scan(
            conn: psycopg.Connection[dict[str, Any]], part: np.ndarray, fetch: int = fetch
        ) -> list[dict[str, Any]]:
            # The floor in SQL only thins the answer (with a margin for rounding); it is applied exactly below.
            params = [[self._embedding_param(v) for v in part], owner, fetch, 1.0 - floor + 1e-6]
            with conn.pipeline():  # one round trip: the index scan's settings, the scans, sorting as it was
                if walk:
                    conn.execute(USE_INDEX, (str(ef_search(fetch, SWEEP_EF_SEARCH_MIN)),))
                cursor = conn.execute(query, params)
                if walk:
                    conn.execute(USED_INDEX)
            return cursor.fetchall()

        # The walks take the server's CPU, one core a connection: a read transaction's batch is split with a
        # second connection that sees the same snapshot (a write transaction's own changes it could not).
        half = (len(vectors) + 1) // 2
        if walk and half >= SPLIT_MIN_SUBJECTS and self.conn.isolation_level == IsolationLevel.REPEATABLE_READ:
            snapshot = self._exported_snapshot()
            with ThreadPoolExecutor(max_workers=1) as beside:
                later = beside.submit(self.store.in_snapshot, snapshot, scan, vectors[half:])
                rows = scan(self.conn, vectors[:half])
                rows += [{**r, "q_n": int(r["q_n"]) + half} for r in later.result()]
        else:
            rows = scan(self.conn, vectors)
        found: list[list[tuple[float, str]]] = [[] for _ in range(len(vectors))]
        for r in rows:
            found[int(r["q_n"]) - 1].append((1.0 - float(r["distance"]), r["id"]))

        def cut(scored: list[tuple[float, str]], excluded: Collection[str]) -> list[tuple[float, str]]:
            skip = set(excluded)
            return sorted((-similarity, i) for similarity, i in scored if similarity >= floor and i not in skip)[:limit]

        cuts = [cut(scored, excluded) for scored, excluded in zip(found, excludes, strict=True)]
        # A cut whose last row ties with the farthest row fetched may have more rows tied with it beyond the
        # scan, which the exact order takes by id: those subjects are scanned again, further (rarely any).
        tied = [n for n, kept in enumerate(cuts) if _tied_at_the_edge(kept, found[n], limit, fetch)]
        if tied:
            rows = scan(self.conn, vectors[tied], fetch + SWEEP_TIES)
            for n in tied:
                found[n] = []
            for r in rows:
                found[tied[int(r["q_n"]) - 1]].append((1.0 - float(r["distance"]), r["id"]))
            for n in tied:
                cuts[n] = cut(found[n], excludes[n])
        ids = sorted({i for kept in cuts for _, i in kept})
        memories: dict[str, Memory] = {}
        if ids:
            read = self.conn.execute(f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ANY(%s::text[])", (ids,))
            memories = {r["id"]: memory_from_row(r) for r in read.fetchall()}
        return [[Neighbour(memories[i], -negated) for negated, i in kept] for kept in cuts]

    def _exported_snapshot(self) -> Snapshot:
        """This transaction's snapshot and whom it acts for, for another connection to take up."""
        row = self.conn.execute(
            "SELECT pg_export_snapshot() AS id, current_setting('zm.system', true) AS system, "
            "current_setting('zm.caller', true) AS caller"
        ).fetchone()
        assert row is not None
        return Snapshot(row["id"], row["system"] or "", row["caller"] or "")

    def _similar_query(
        self,
        vector: np.ndarray,
        *,
        fetch: int,
        scopes: Collection[str] | None,
        owner: str | None,
        exclude: Collection[str],
        kinds: Collection[str] | None = None,
        walked: bool = False,
        columns: str = MEMORY_COLUMNS,
    ) -> tuple[str, list[Any]]:
        """The nearest-neighbour query, exact or through the HNSW index as the candidates' count decides
        (``walked``: the walk alone, the count skipped), and its parameters; run with ``USE_INDEX`` before
        it and ``USED_INDEX`` after. Each row says whether it came from the walk."""
        dim = int(self.store.dim)
        if vector.shape != (dim,):
            raise ValueError(f"similar: expected a vector of {dim} dimensions, got shape {vector.shape}")
        # The dimension is a literal, not a parameter: the partial index's predicate
        # must be provable from the query text, even in a generic prepared plan.
        where = ["status = 'live'", f"embedding_dim = {dim}"]
        params: list[Any] = []
        if scopes is not None:
            where.append("scope = ANY(%s::text[])")
            params.append(sorted(scopes))
        if owner is not None:
            where.append("owner = %s")
            params.append(owner)
        if kinds is not None:
            where.append("kind = ANY(%s::text[])")
            params.append(sorted(str(k) for k in kinds))
        if exclude:
            where.append("id <> ALL(%s::text[])")
            params.append(sorted(exclude))
        filters = " AND ".join(where)
        q = self._embedding_param(vector)  # %b, binary: as text, formatting 512 numbers took ~0.8 ms a time
        walk = (
            f"SELECT {columns}, embedding::vector({dim}) <=> %b::vector({dim}) AS distance, true AS walked "
            f"FROM memories WHERE {filters} ORDER BY distance LIMIT %s"
        )
        if walked:
            return walk, [q, *params, fetch]
        bound = int(self.store.exact_search_rows)
        # Up to the bound, compare with every candidate: the distance spelled on the bare column, which the
        # HNSW expression index cannot serve, so the planner filters by the b-tree indexes and sorts (exact,
        # like SQLite). Above it, walk the index. The count decides which branch runs (a one-time filter:
        # the other is never executed), in the same statement.
        # (The test stands above each branch's LIMIT, where the planner cannot push it down: below a
        # parallel plan's Gather it would start the workers of the branch it skips.)
        query = (
            f"WITH counted AS MATERIALIZED (SELECT count(*) AS n FROM (SELECT 1 FROM memories WHERE {filters} "
            f"LIMIT {bound + 1}) AS candidates) "
            f"SELECT * FROM (SELECT {columns}, embedding <=> %b AS distance, false AS walked FROM memories "
            f"WHERE {filters} ORDER BY distance LIMIT %s) AS exact WHERE (SELECT n FROM counted) <= {bound} "
            f"UNION ALL SELECT * FROM ({walk}) AS walk WHERE (SELECT n FROM counted) > {bound}"
        )
        return query, [*params, q, *params, fetch, q, *params, fetch]

    def _candidates(self, filters: str, params: Sequence[Any]) -> int:
        """How many rows pass the filters, counting no further than just past the exact-search bound."""
        row = self.conn.execute(
            f"SELECT count(*) AS n FROM (SELECT 1 FROM memories WHERE {filters} LIMIT %s) AS candidates",
            [*params, self.store.exact_search_rows + 1],
        ).fetchone()
        return int(row["n"]) if row else 0

    def memory_vectors(self, memory_ids: Collection[str]) -> dict[str, np.ndarray]:
        """The shared query's answer, with the vectors sent in binary: read as text, parsing 512 numbers
        a vector cost more than the query (60 vectors, a recall's text candidates: 26 ms as text)."""
        ids = list(dict.fromkeys(memory_ids))
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(ids), 500):
            cursor = self.conn.execute(
                "SELECT id, embedding FROM memories WHERE id = ANY(%s::text[]) AND embedding IS NOT NULL",
                (ids[start : start + 500],),
                binary=True,
            )
            for row in cursor.fetchall():
                found[row["id"]] = self._vector_from_value(row["embedding"])
        return found

    def _brief_rows_with_vectors(self, ids: list[str]) -> Sequence[Any]:
        # In binary, as ``memory_vectors`` reads them.
        cursor = self.conn.execute(
            f"SELECT {BRIEF_COLUMNS}, embedding FROM memories WHERE id = ANY(%s::text[])", (ids,), binary=True
        )
        return cursor.fetchall()


@dataclass(slots=True)
class Nearest:
    """One nearest-neighbour search's arguments (``PostgresVectors._nearest``), and whether it walked."""

    vector: np.ndarray
    columns: str
    floor: float
    limit: int
    scopes: Collection[str] | None
    owner: str | None
    exclude: Collection[str]
    kinds: Collection[str] | None
    walked: bool = False

    @property
    def empty(self) -> bool:
        """Whether nothing can pass the filters (no row asked for, no scope or kind allowed)."""
        return (
            self.limit <= 0
            or (self.scopes is not None and not self.scopes)
            or (self.kinds is not None and not self.kinds)
        )

    @property
    def fetch(self) -> int:
        return self.limit + 8  # relaxed order may misplace a few rows at the edge: sorted after

    @property
    def key(self) -> tuple[Any, ...]:
        """The memo's key for these filters (``walked_lately``)."""
        return (
            None if self.scopes is None else tuple(sorted(self.scopes)),
            self.owner,
            None if self.kinds is None else tuple(sorted(str(k) for k in self.kinds)),
        )


class BriefSearch:
    """A ``VectorSearch`` on the transaction's connection, reading only the columns of a brief (a memory's
    JSON source, read and decoded for each of the 68 rows a recall's search returns, is not part of one).

    ``beside``'s reads come first: they need no vector (recall's query is embedded on a thread meanwhile).
    The search is sent as soon as they are done, when ``text_briefs`` has read its rows
    (``PostgresVectors._rows_read``) and before it makes briefs of them: the server walks the index while
    this process makes the briefs and recall scores their texts, and the search's rows are fetched after
    ``beside`` returns. From the search sent until then the connection is in pipeline mode, and nothing
    else reads it (what remains of ``beside`` is Python). A ``beside`` that reads no text rows has the
    search made after it."""

    def __init__(
        self,
        tx: PostgresVectors,
        floor: float,
        limit: int,
        scopes: Collection[str] | None,
        kinds: Collection[str] | None,
    ) -> None:
        self._tx, self._floor, self._limit, self._scopes, self._kinds = tx, floor, limit, scopes, kinds

    def run(self, vector: Callable[[], np.ndarray], beside: Callable[[], T]) -> tuple[list[BriefNeighbour], T]:
        tx = self._tx
        sent: list[tuple[Nearest, psycopg.Cursor[dict[str, Any]]]] = []
        with ExitStack() as pipeline:

            def send() -> None:
                nearest = self._nearest(vector())
                if not nearest.empty:
                    pipeline.enter_context(tx._conn.pipeline())  # left when the search's rows are fetched
                    sent.append((nearest, tx._send_nearest(nearest)))
                    tx._in_flight = True

            tx._rows_read = send
            try:
                other = beside()
            finally:
                tx._rows_read = None
                tx._in_flight = False
            found = tx._finish_nearest(*sent[0]) if sent else tx._nearest_of(self._nearest(vector()))
        return [BriefNeighbour(brief_from_row(row), similarity) for row, similarity in found], other

    def _nearest(self, vector: np.ndarray) -> Nearest:
        return Nearest(vector, BRIEF_COLUMNS, self._floor, self._limit, self._scopes, None, (), self._kinds)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """An exported snapshot (``pg_export_snapshot``) and the ``zm.*`` settings of its transaction."""

    id: str
    system: str
    caller: str
