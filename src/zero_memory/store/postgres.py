"""The scale-out store: PostgreSQL with pgvector.

The queries are the shared ones in ``sql.py``; this adapter adds vector search
(an HNSW cosine index per embedding dimension), full text (a generated
``tsvector`` and its words' postings, ``memory_words``), advisory locks and a
connection pool. Several processes can share one database: writers that must
not race call ``Tx.serialize(key)``, named locks are ``pg_try_advisory_lock``
on a connection of their own, and migrating takes an advisory lock so
processes starting at once apply each step once.

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

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import numpy as np
import psycopg
from pgvector import Vector
from pgvector.psycopg import register_vector
from psycopg import IsolationLevel
from psycopg.rows import dict_row
from psycopg.sql import SQL, Literal
from psycopg_pool import ConnectionPool

from zero_memory import errors
from zero_memory.clock import to_text, utcnow
from zero_memory.domain.memory import Memory
from zero_memory.domain.records import Channel
from zero_memory.store import migrations
from zero_memory.store.base import BriefNeighbour, Neighbour
from zero_memory.store.fulltext import POSTINGS_BUDGET, TextPlan, rank_postings
from zero_memory.store.pg_params import statement
from zero_memory.store.rows import BRIEF_COLUMNS, brief_from_row, cap_payload
from zero_memory.store.sql import MEMORY_COLUMNS, SqlTx, memory_from_row
from zero_memory.store.tables import copied_table

log = logging.getLogger(__name__)
T = TypeVar("T")
R = TypeVar("R")

# Advisory locks take two int4 keys: a space, then a hash of the name. Spaces
# keep named locks, write serialization and migration apart from each other
# and from any single-bigint lock another application takes in the database.
NAMED_LOCKS = 0x7A6D01
SERIAL_LOCKS = 0x7A6D02
MIGRATION_LOCK = (0x7A6D03, 0)

# Up to this many candidate rows (live, of the store's dimension, passing the
# scope and owner filters), similar() compares the query with every one of them
# instead of walking the HNSW graph: exact, and a few milliseconds. Each search
# first counts its candidates up to this bound, and each vector is stored out of
# line (TOAST, ~3 page reads a row): at 10,000 the count alone took ~7 ms and an
# exact search ~30-90 ms, where the HNSW walk takes a few; an iterative scan
# (pgvector 0.8) keeps a filtered walk from starving, so a small scope among
# many rows of other scopes still gets its rows (tests/store/test_pg_filtered_search.py).
EXACT_SEARCH_ROWS = 2_000

# A search whose filters had more candidates than the exact-search bound walks the index without
# counting them again for this long (counting 2,001 rows under the row policy took ~1 ms of a 100k
# recall). A set of scopes that shrank below the bound meanwhile is walked, with the iterative scan,
# rather than scanned exactly, until then, unless the walk comes back with fewer rows than it
# fetched: then they are counted again. At most this many filters are remembered.
WALK_MEMO_S = 10.0
WALK_MEMO_KEYS = 10_000

# How long the common words read from the planner's statistics are kept (full text).
COMMON_WORDS_TTL_S = 600.0
COMMON_WORDS_SAMPLE = 30_000  # rows, as ANALYZE samples at the default statistics target
COMMON_WORDS_MIN_SHARE = 0.001  # rarer words are counted through the index (at most POSTINGS_BUDGET rows)

# A sweep's batch of at least twice this many subjects is searched on two connections at once.
SPLIT_MIN_SUBJECTS = 16

# The HNSW candidate list: it grows with the limit asked for.
EF_SEARCH_MIN = 64
EF_SEARCH_MAX = 1000
# The sweep's candidate list, for its few nearest rows a subject (a cap of 3, 6 fetched): SWEEP_EF_SEARCH_MIN
# instead of 64 found the same four nearest of 1,000 subjects at 100,000 memories in about half the server's
# time, and 0.9912 of the exact scan's pairs for 10,000 subjects where 64 found 0.9946 (docs/benchmarks-archive.md).
SWEEP_EF_SEARCH_MIN = 24
# The rows a sweep's scan fetches beyond a subject's cut and its excluded rows. An index scan's first
# ef_search candidates come back in their exact order (relaxed order only lets a later iteration's rows come
# after nearer ones), so a scan of fewer rows than ef_search needs no margin for misplaced rows; this one is
# for rows that fail the filters meanwhile. A subject whose cut ties with the farthest row fetched is
# scanned again for SWEEP_TIES more rows: the tied rows are taken in id order, as the exact scan takes them.
SWEEP_MARGIN = 2
SWEEP_TIES = 8

# A load of at least this many memories, and more than the store holds, drops the HNSW index
# and builds it once afterwards: pgvector updates the graph on every insert (measured: 1,000 inserts of
# 512 dimensions ran at 460/s with the index, 1,880/s without it).
BULK_MIN_ROWS = 5_000
# Memory for building the HNSW index: the build is much faster when the graph fits (pgvector's advice).
BUILD_MEMORY_MB = 1_024


# A bulk import's batch: one row per element of the column arrays (PostgresTx.insert_memories).
INSERT_MEMORIES = (
    f"INSERT INTO memories({MEMORY_COLUMNS}, embedding, embedding_model, embedding_dim) SELECT * FROM unnest("
    + ", ".join(
        "%b::vector[]" if c == "embedding" else "%s::int[]" if c in ("rank", "embedding_dim") else "%s::text[]"
        for c in [*MEMORY_COLUMNS.split(", "), "embedding", "embedding_model", "embedding_dim"]
    )
    + ")"
)
# One audit row per memory and its link, as add_audit writes them (PostgresTx.add_memory_audits).
INSERT_MEMORY_AUDITS = (
    "WITH added AS (INSERT INTO audit(at, actor, action, owner, memory_ids, payload, run_id) "
    "SELECT %s, %s, %s, %s, ids, payload, %s FROM unnest(%s::text[], %s::text[]) AS u(ids, payload) "
    "RETURNING seq, memory_ids) "
    "INSERT INTO audit_memories(audit_seq, memory_id) SELECT seq, memory_ids::json ->> 0 FROM added"
)


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


# The word counts of full-text ranking answer a system pass only (migration 0021): the transaction names
# the pass "statistics" for them, keeping its own zm.system in zm.counted_for, and takes it back after.
STATISTICS_PASS = (
    "SELECT set_config('zm.counted_for', coalesce(current_setting('zm.system', true), ''), true), "
    "set_config('zm.system', 'statistics', true)"
)
STATISTICS_PASSED = "SELECT set_config('zm.system', current_setting('zm.counted_for'), true)"


# Each word's rows of the scopes given, by their seq: a range of memory_words's primary key each, read
# from the index alone (migration 0015).
POSTINGS = (
    "SELECT q.word, (SELECT array_agg(seq) FROM zm_word_postings(q.word, %s::text[])) AS seqs "
    "FROM unnest(%s::text[]) AS q(word)"
)


def _tied_at_the_edge(kept: list[tuple[float, str]], scored: list[tuple[float, str]], limit: int, fetch: int) -> bool:
    """Whether a full cut (``kept``: negated similarities and ids) ends on a row as far as the farthest of a
    scan that stopped at its limit (``fetch`` rows, ``scored``): rows beyond it may tie with it."""
    if len(kept) < limit or len(scored) < fetch:
        return False
    return round(-kept[-1][0], 6) <= round(min(similarity for similarity, _ in scored), 6)


def lock_key(name: str) -> int:
    """A stable signed 32-bit hash of a lock name, the same in every process."""
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=4).digest(), "big", signed=True)


class PostgresTx(SqlTx):
    def __init__(self, store: PostgresStore, conn: psycopg.Connection[dict[str, Any]]) -> None:
        self.store = store
        self.conn = conn

    def _exec(self, sql: str, params: Sequence[Any] = ()) -> int:
        shared = statement(sql)
        return self.conn.execute(shared.sql, shared.params(params)).rowcount

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        shared = statement(sql)
        cursor = self.conn.execute(shared.sql, shared.params(params))
        return cursor.fetchall() if cursor.description else []

    def _embedding_param(self, vector: np.ndarray) -> Any:
        return Vector(np.ascontiguousarray(vector, dtype=np.float32))

    def _vector_from_value(self, value: Any) -> np.ndarray:
        if isinstance(value, Vector):
            return value.to_numpy().copy()
        return np.asarray(value, dtype=np.float32)

    def insert_memories(self, memories: Sequence[tuple[Memory, np.ndarray]], model: str) -> None:
        """One statement for the whole batch, each column one array parameter, sent in binary: the shared
        multi-row INSERT is a long statement psycopg parses anew each time (8 ms a statement of 42 rows),
        and a vector as text costs more to format and parse than to store."""
        if not memories:
            return
        columns = [list(c) for c in zip(*(self._memory_values(m, v, model) for m, v in memories), strict=True)]
        self.conn.execute(INSERT_MEMORIES, columns)

    def add_memory_audits(
        self,
        *,
        actor: str,
        action: str,
        owner: str | None,
        payloads: Sequence[tuple[str, dict[str, Any]]],
        run_id: str | None,
        at: datetime,
    ) -> None:
        """The audit rows and their memory links in one statement (the shared one takes two a chunk)."""
        if not payloads:
            return
        ids = [memory_id for memory_id, _ in payloads]
        self.conn.execute(
            INSERT_MEMORY_AUDITS,
            (
                to_text(at),
                actor,
                action,
                owner,
                run_id,
                [json.dumps([i]) for i in ids],
                [json.dumps(cap_payload(p), sort_keys=True) for _, p in payloads],
            ),
        )

    def insert_rows(self, table: str, rows: Sequence[dict[str, Any]]) -> None:
        """``zm db copy``'s rows, each column one array parameter (vectors in binary): the shared multi-row
        INSERT is a long statement psycopg parses anew each time. (COPY refuses a table under row-level
        security.)"""
        spec = copied_table(table)
        if not rows:
            return
        types = self._column_types(spec.name)
        arrays = ", ".join(
            "%b::vector[]" if column == "embedding" else f"%s::{types[column]}[]" for column in spec.columns
        )
        columns = [[self._copied_value(column, row[column]) for row in rows] for column in spec.columns]
        self.conn.execute(f"INSERT INTO {spec.name}({', '.join(spec.columns)}) SELECT * FROM unnest({arrays})", columns)

    def _copied_value(self, column: str, value: Any) -> Any:
        if column == "embedding" and value is not None:
            return self._embedding_param(np.asarray(value, dtype=np.float32))
        return value

    def _column_types(self, table: str) -> dict[str, str]:
        """Each column's type, as SQL spells it."""
        rows = self.conn.execute(
            "SELECT attname, format_type(atttypid, NULL) AS type FROM pg_attribute "
            "WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped",
            (table,),
        ).fetchall()
        return {r["attname"]: r["type"] for r in rows}

    def serialize(self, key: str) -> None:
        """Wait for, then hold until this transaction ends, the write lock on ``key``."""
        self.conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (SERIAL_LOCKS, lock_key(key)))

    def act_as(self, uid: str) -> None:
        """Set ``zm.caller`` for this transaction (the row-level security policies of 0009 read it).

        A system pass that computes an owner's visibility keeps acting as the system;
        a second, different user in one transaction is a bug, refused.
        """
        acting = self.store.acting()
        if acting.system is not None or acting.caller == uid:
            return
        if acting.caller is not None:
            raise errors.internal(f"one transaction acts for one user: {acting.caller}, then {uid}")
        self.conn.execute("SELECT set_config('zm.caller', %s, true)", (uid,))
        acting.caller = uid

    def act_as_system(self, name: str) -> None:
        """Set ``zm.system`` for this transaction: the policies then show every row."""
        acting = self.store.acting()
        if acting.system is not None:
            return
        self.conn.execute("SELECT set_config('zm.system', %s, true)", (name,))
        acting.system = name

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
        if limit <= 0 or (scopes is not None and not scopes) or (kinds is not None and not kinds):
            return []
        fetch = limit + 8  # relaxed order may misplace a few rows at the edge: sorted below
        key = (
            None if scopes is None else tuple(sorted(scopes)),
            owner,
            None if kinds is None else tuple(sorted(str(k) for k in kinds)),
        )

        def search(walked: bool) -> list[dict[str, Any]]:
            query, params = self._similar_query(
                vector,
                fetch=fetch,
                scopes=scopes,
                owner=owner,
                exclude=exclude,
                kinds=kinds,
                walked=walked,
                columns=columns,
            )
            # One round trip: the settings of an index scan, the search, sorting as it was.
            with self.conn.pipeline():
                self.conn.execute(USE_INDEX, (str(ef_search(fetch)),))
                cursor = self.conn.execute(query, params)
                self.conn.execute(USED_INDEX)
            return cursor.fetchall()

        walked = self.store.walked_lately(key)
        rows = search(walked)
        if walked and len(rows) < fetch:
            # A walk that came back short: few rows pass the filters now (the scopes shrank since they were
            # last counted) or the iterative scan gave up on them. Counted again, they may be searched exactly.
            rows = search(False)
        if rows and rows[0]["walked"]:
            self.store.note_walk(key)
        else:
            self.store.forget_walk(key)
        scored = [(r, 1.0 - float(r["distance"])) for r in rows]
        scored = [(r, similarity) for r, similarity in scored if similarity >= floor]
        scored.sort(key=lambda pair: (-pair[1], pair[0]["id"]))
        return scored[:limit]

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

    def _word_counts(self, words: list[str]) -> tuple[int, dict[str, int]]:
        # Counted over every memory, whoever the caller, as SQLite counts them: the counting functions
        # answer a system pass only (migration 0021), so the counts are asked as the pass "statistics"
        # and the transaction's own setting is put back before anything else runs in it.
        # Common words from a sample of the table (as ANALYZE takes one, after the first ANALYZE);
        # the others are rare by that measure, and counting their rows through the index is cheap.
        with self.conn.pipeline():  # one round trip
            self.conn.execute(STATISTICS_PASS)
            common = self.store.common_words(self.conn)
            rare = [w for w in words if w not in common]
            total = self.conn.execute("SELECT zm_memory_documents() AS n")
            found = self.conn.execute(
                "SELECT word, documents FROM zm_word_documents(%s::text[], %s)", (rare, POSTINGS_BUDGET + 1)
            )
            self.conn.execute(STATISTICS_PASSED)
        row = total.fetchone()
        documents = int(row["n"]) if row else 0
        counts = {w: max(1, round(common[w] * documents)) for w in words if w in common}
        counts.update({r["word"]: int(r["documents"]) for r in found.fetchall()})
        return documents, counts

    def sessions_served(self, memory_ids: Collection[str], *, since: datetime, channel: Channel) -> dict[str, int]:
        # Every user's sessions, for the memories the caller may read (zm_sessions_served, migrations 0017 and
        # 0018): the surfacings policy would show the caller its own only, and the two stores would rank apart.
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return {}
        rows = self._query(
            "SELECT memory_id, sessions FROM zm_sessions_served(?::text[], ?, ?)",
            (ids, to_text(since), str(channel)),
        )
        return {r["memory_id"]: int(r["sessions"]) for r in rows}

    def text_candidates(self, plan: TextPlan, *, scopes: Collection[str], limit: int) -> list[str]:
        """SQLite's way: each matched word's rows of the scopes asked (their ``seq`` only, from the
        postings of memory_words, one statement for every word), ranked by ``rank_postings``; then the
        ranking a slice at a time, keeping live rows, until enough are kept. Ranking every matching row
        in SQL read and scored each whole row (up to the 5,000 postings of the plan): at 100,000
        memories a 3,500-row word took 9 ms that way, its postings from the GIN index 3 ms."""
        if not plan.matched or not scopes or limit <= 0:
            return []
        readable = sorted(scopes)
        rows = self.conn.execute(POSTINGS, (readable, list(plan.matched)), binary=True).fetchall()
        seqs = {r["word"]: r["seqs"] or [] for r in rows}
        postings = [np.asarray(seqs.get(word, []), dtype=np.int64) for word in plan.matched]
        ranked = rank_postings(postings, [plan.weights[w] for w in plan.matched])
        kept: list[str] = []
        step = max(limit * 4, 100)
        for start in range(0, len(ranked), step):
            part = ranked[start : start + step]
            rows = self.conn.execute(
                "SELECT seq, id FROM memories WHERE seq = ANY(%s::bigint[]) AND status = 'live' "
                "AND scope = ANY(%s::text[])",
                (part, readable),
            ).fetchall()
            found = {int(r["seq"]): r["id"] for r in rows}
            kept.extend(found[seq] for seq in part if seq in found)
            if len(kept) >= limit:
                break
        return kept[:limit]


class BriefSearch:
    """A ``VectorSearch`` that runs the search when its neighbours are asked for, one statement on the
    transaction's connection, reading only the columns of a brief (a memory's JSON source, read and decoded
    for each of the 68 rows a recall's search returns, is not part of one)."""

    def __init__(
        self, tx: PostgresTx, floor: float, limit: int, scopes: Collection[str] | None, kinds: Collection[str] | None
    ) -> None:
        self._tx, self._floor, self._limit, self._scopes, self._kinds = tx, floor, limit, scopes, kinds

    def run(self, vector: np.ndarray, beside: Callable[[], T]) -> tuple[list[BriefNeighbour], T]:
        # The search is a statement on the transaction's connection, as ``beside``'s reads are: one after
        # the other.
        other = beside()
        found = self._tx._nearest(
            vector, BRIEF_COLUMNS, floor=self._floor, limit=self._limit, scopes=self._scopes, kinds=self._kinds
        )
        return [BriefNeighbour(brief_from_row(row), similarity) for row, similarity in found], other


@dataclass(frozen=True, slots=True)
class Snapshot:
    """An exported snapshot (``pg_export_snapshot``) and the ``zm.*`` settings of its transaction."""

    id: str
    system: str
    caller: str


@dataclass(slots=True)
class Acting:
    """Whom the current transaction of a thread acts for, as set in its ``zm.*`` settings."""

    caller: str | None = None
    system: str | None = None


class PostgresStore:
    backend = "postgres"

    def __init__(
        self, url: str, *, dim: int, max_connections: int = 10, exact_search_rows: int = EXACT_SEARCH_ROWS
    ) -> None:
        self.url = url
        self.dim = dim
        self.exact_search_rows = exact_search_rows
        self._local = threading.local()
        self._common: tuple[float, dict[str, float]] | None = None
        self._walks: dict[tuple[Any, ...], float] = {}
        self._pool = ConnectionPool(
            url,
            min_size=1,
            max_size=max_connections,
            kwargs={"autocommit": True, "row_factory": dict_row},
            configure=register_vector,
            # A connection the server dropped (a restart, a failover) is replaced
            # on checkout instead of failing the request that drew it.
            check=ConnectionPool.check_connection,
            open=False,
            name="zero-memory",
        )

    @classmethod
    def open(
        cls,
        url: str,
        *,
        dim: int = 512,
        max_connections: int = 10,
        exact_search_rows: int = EXACT_SEARCH_ROWS,
    ) -> PostgresStore:
        store = cls(url, dim=dim, max_connections=max_connections, exact_search_rows=exact_search_rows)
        # Migrate before the pool opens: each pooled connection looks up the vector type.
        store.migrate()
        store._pool.open(wait=True, timeout=30)
        return store

    def _connect(self, *, read_only: bool = False) -> psycopg.Connection[dict[str, Any]]:
        """A connection of its own, outside the pool: for migrations and named locks; ``read_only``: every
        transaction of it is READ ONLY, so the server refuses any write made through it."""
        url = self.url
        if read_only:
            # Added to the URL's own options rather than replacing them.
            own = psycopg.conninfo.conninfo_to_dict(url).get("options") or ""
            url = psycopg.conninfo.make_conninfo(url, options=f"{own} -c default_transaction_read_only=on".strip())
        try:
            return psycopg.connect(url, autocommit=True, row_factory=dict_row)
        except psycopg.OperationalError as exc:
            reason = (str(exc).strip() or type(exc).__name__).splitlines()[0]
            raise errors.unavailable(
                f"cannot connect to PostgreSQL ({reason}); check ZM_DATABASE_URL and that the server is up"
            ) from exc

    # -- transactions and locks --------------------------------------------------

    @contextmanager
    def tx(self, *, write: bool = False) -> Iterator[PostgresTx]:
        """One pooled connection, one transaction; a nested ``tx()`` on this thread joins it.

        A read transaction sees one snapshot throughout (REPEATABLE READ), as a
        SQLite reader does. A write transaction is READ COMMITTED: row locks order
        concurrent writers, and a check-then-write that must not race takes
        ``serialize`` (SQLite serializes every writer of the file instead).
        """
        outer: psycopg.Connection[dict[str, Any]] | None = getattr(self._local, "conn", None)
        if outer is not None:
            yield PostgresTx(self, outer)
            return
        with self._pool.connection() as conn:
            # Read by psycopg when the transaction begins: BEGIN ISOLATION LEVEL ...
            conn.isolation_level = None if write else IsolationLevel.REPEATABLE_READ
            self._local.conn = conn
            # Transaction-local settings end with the transaction; so does this record of them.
            self._local.acting = Acting()
            try:
                with conn.transaction():
                    yield PostgresTx(self, conn)
            finally:
                self._local.conn = None
                self._local.acting = Acting()

    def in_snapshot(self, snapshot: Snapshot, work: Callable[[psycopg.Connection[dict[str, Any]], T], R], arg: T) -> R:
        """``work(conn, arg)`` on another pooled connection, in a read transaction that sees ``snapshot`` and
        acts as its transaction did; the exporting transaction must stay open until this returns."""
        with self._pool.connection() as conn:
            conn.isolation_level = IsolationLevel.REPEATABLE_READ
            with conn.pipeline(), conn.transaction():  # the start in one round trip
                conn.execute(SQL("SET TRANSACTION SNAPSHOT {}").format(Literal(snapshot.id)))
                conn.execute(
                    "SELECT set_config('zm.system', %s, true), set_config('zm.caller', %s, true)",
                    (snapshot.system, snapshot.caller),
                )
                return work(conn, arg)

    def walked_lately(self, key: tuple[Any, ...]) -> bool:
        """Whether a search with these filters (scopes, owner, kinds) walked the index within
        ``WALK_MEMO_S``: its candidates were above the exact-search bound, and the next search walks
        without counting them again."""
        at = self._walks.get(key)
        return at is not None and time.monotonic() - at < WALK_MEMO_S

    def note_walk(self, key: tuple[Any, ...]) -> None:
        if len(self._walks) >= WALK_MEMO_KEYS:
            self._walks.clear()
        self._walks[key] = time.monotonic()

    def forget_walk(self, key: tuple[Any, ...]) -> None:
        self._walks.pop(key, None)

    def acting(self) -> Acting:
        """Whom this thread's open transaction acts for."""
        acting: Acting | None = getattr(self._local, "acting", None)
        if acting is None:
            acting = self._local.acting = Acting()
        return acting

    @contextmanager
    def advisory_lock(self, name: str) -> Iterator[bool]:
        """A named lock shared by every process using the database; yields whether it was taken.

        Held by a connection of its own for the whole block, so a process that
        dies releases it with its connection.
        """
        conn = self._connect()
        try:
            row = conn.execute("SELECT pg_try_advisory_lock(%s, %s) AS taken", (NAMED_LOCKS, lock_key(name))).fetchone()
            taken = bool(row and row["taken"])
            try:
                yield taken
            finally:
                if taken and not conn.closed:
                    conn.execute("SELECT pg_advisory_unlock(%s, %s)", (NAMED_LOCKS, lock_key(name)))
        finally:
            conn.close()

    # -- schema ------------------------------------------------------------------------

    def migrate(self) -> list[str]:
        """Apply every migration not yet applied; safe when several processes start at once."""
        applied: list[str] = []
        # Closing the connection releases the lock, on success or failure alike.
        with self._connect() as conn:
            # A migration that reads or changes rows must see them all (row-level security, 0009).
            conn.execute("SELECT set_config('zm.system', 'migrate', false)")
            conn.execute("SELECT pg_advisory_lock(%s, %s)", MIGRATION_LOCK)
            _ensure_pgvector(conn)
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
                'name TEXT COLLATE "C" NOT NULL, applied_at TEXT COLLATE "C" NOT NULL)'
            )
            done = {r["version"]: r["name"] for r in conn.execute("SELECT version, name FROM schema_migrations")}
            for version, name, script in migrations.pending("postgres", done):
                with conn.transaction():
                    conn.execute(script)
                    conn.execute(
                        "INSERT INTO schema_migrations(version, name, applied_at) VALUES (%s, %s, %s)",
                        (version, name, to_text(utcnow())),
                    )
                applied.append(name)
            self._ensure_vector_index(conn)
            _warn_if_policies_bypassed(conn)
        return applied

    def pending_migrations(self) -> list[str]:
        """The migrations ``migrate()`` would apply, read in read-only transactions."""
        with self._connect(read_only=True) as conn:
            row = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL AS present").fetchone()
            done: dict[int, str] = {}
            if row and row["present"]:
                done = {r["version"]: r["name"] for r in conn.execute("SELECT version, name FROM schema_migrations")}
        return [name for _, name, _ in migrations.pending("postgres", done)]

    @property
    def vector_index_name(self) -> str:
        return f"memories_embedding_hnsw_{int(self.dim)}"

    def _ensure_vector_index(self, conn: psycopg.Connection[dict[str, Any]]) -> None:
        """Create the HNSW index if it is missing: at every start, so a bulk load that died after dropping
        it (``bulk_load``) leaves a store whose next start has it again. Searches meanwhile are exact."""
        dim = int(self.dim)
        row = conn.execute("SELECT to_regclass(%s) IS NOT NULL AS present", (self.vector_index_name,)).fetchone()
        if row and row["present"]:
            return
        started = time.monotonic()
        current = conn.execute("SELECT setting::int / 1024 AS mb FROM pg_settings WHERE name = 'maintenance_work_mem'")
        found = current.fetchone()
        if found is not None and int(found["mb"]) < BUILD_MEMORY_MB:
            conn.execute(f"SET maintenance_work_mem = '{BUILD_MEMORY_MB}MB'")
        # Not CONCURRENTLY: a build that dies leaves no index (rolled back), never an invalid one that
        # IF NOT EXISTS would take for built; writers wait for the build, searches do not.
        conn.execute(
            f"CREATE INDEX IF NOT EXISTS {self.vector_index_name} ON memories "
            f"USING hnsw ((embedding::vector({dim})) vector_cosine_ops) WHERE embedding_dim = {dim}"
        )
        conn.execute("RESET maintenance_work_mem")
        elapsed = time.monotonic() - started
        if elapsed > 1.0:
            log.info("built the vector index %s in %.1f s", self.vector_index_name, elapsed)

    @contextmanager
    def bulk_load(self, rows: int) -> Iterator[None]:
        """Load about ``rows`` memories with the HNSW index dropped, then build it once.

        Only for a load of at least ``BULK_MIN_ROWS`` memories and more than the store holds
        (a smaller one costs less row by row than rebuilding the graph of what is there), and analyses
        the tables afterwards. The drop commits before the load: searches meanwhile are exact, and a
        process that dies mid-load leaves a store that still recalls, whose next start (``migrate``)
        builds the index again.
        """
        dropped = rows >= BULK_MIN_ROWS and self._drop_vector_index(rows)
        try:
            yield
        finally:
            if dropped:
                with self._connect() as conn:
                    self._ensure_vector_index(conn)
                    # The planner's statistics, now rather than at autovacuum's next visit: without them it
                    # walked a whole scope's index to find a word's rows (full text at 100,000 memories:
                    # 131-196 ms, 37 ms through the full-text index once analysed).
                    conn.execute("ANALYZE")
                self._common = None

    def _drop_vector_index(self, rows: int) -> bool:
        with self._connect() as conn:
            conn.execute("SELECT set_config('zm.system', 'bulk-load', false)")
            found = conn.execute("SELECT count(*) AS n FROM memories").fetchone()
            if found is None or int(found["n"]) >= rows:
                return False
            try:
                conn.execute(f"DROP INDEX IF EXISTS {self.vector_index_name}")
            except psycopg.errors.InsufficientPrivilege:
                log.warning("bulk load: may not drop %s; it is kept up row by row", self.vector_index_name)
                return False
        log.info("bulk load of %d memories: the vector index is built after it", rows)
        return True

    def common_words(self, conn: psycopg.Connection[dict[str, Any]]) -> dict[str, float]:
        """The most common words of the stored texts, each with the share of memories holding it.

        From a sample of about ``COMMON_WORDS_SAMPLE`` rows (``zm_common_words``,
        migration 0009: pg_stats shows nothing of a table under row-level
        security), read again every ``COMMON_WORDS_TTL_S`` seconds; empty
        before the table was first analysed (ANALYZE or autovacuum). ``conn``
        acts as a system pass (0021: the counts answer no user's transaction).
        """
        now = time.monotonic()
        cached = self._common
        if cached is not None and now - cached[0] < COMMON_WORDS_TTL_S:
            return cached[1]
        rows = conn.execute(
            "SELECT word, share FROM zm_common_words(%s, %s)", (COMMON_WORDS_SAMPLE, COMMON_WORDS_MIN_SHARE)
        ).fetchall()
        words = {r["word"]: float(r["share"]) for r in rows}
        self._common = (now, words)
        return words

    def wait_for_index(self) -> None:
        """Nothing to wait for: pgvector's index is maintained with the table."""

    def purge_removed(self) -> None:
        """After rows were removed (account deletion): vacuum the memories, so their dead row versions
        and HNSW index entries go now rather than at autovacuum's next visit.

        VACUUM needs the table's owner (the servers' role, docs/deployment.md); under another
        role PostgreSQL skips it with a warning and autovacuum does it later.
        """
        with self._connect() as conn:
            conn.execute("VACUUM memories")

    def close(self) -> None:
        self._pool.close()


def _warn_if_policies_bypassed(conn: psycopg.Connection[dict[str, Any]]) -> None:
    """Row-level security binds no superuser and no BYPASSRLS role: say so where an operator looks."""
    row = conn.execute("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user").fetchone()
    if row and (row["rolsuper"] or row["rolbypassrls"]):
        log.warning(
            "connected to PostgreSQL as a %s: row-level security does not apply to it; run the servers as a "
            "role that is neither (docs/deployment.md, Row-level security)",
            "superuser" if row["rolsuper"] else "BYPASSRLS role",
        )


def _ensure_pgvector(conn: psycopg.Connection[dict[str, Any]]) -> None:
    row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    if row is None:
        _create_pgvector(conn)
        row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    version = str(row["extversion"]) if row else "?"
    if not supports_iterative_scan(version):
        raise errors.unavailable(
            f"pgvector {version} is too old: zero-memory needs 0.8 or later (filtered HNSW searches); "
            "install it on the server, then run: ALTER EXTENSION vector UPDATE;"
        )


def supports_iterative_scan(version: str) -> bool:
    """pgvector 0.8 brought iterative index scans."""
    parts = [int(p) if p.isdigit() else 0 for p in version.split(".")[:2]]
    return tuple(parts) >= (0, 8)


def _create_pgvector(conn: psycopg.Connection[dict[str, Any]]) -> None:
    try:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.errors.InsufficientPrivilege as exc:
        raise errors.unavailable(
            "the pgvector extension is not installed in this database and this user may not install it; "
            "ask a superuser to run: CREATE EXTENSION vector;"
        ) from exc
    except psycopg.errors.UndefinedFile as exc:
        raise errors.unavailable(
            "the pgvector extension is not available on this PostgreSQL server; install pgvector 0.8 or later"
        ) from exc
