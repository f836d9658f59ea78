"""A PostgreSQL transaction: the shared queries (``sql.py``) over one pooled connection, whom it acts
for (row-level security), the batched inserts of an import or a copy, and full text over the words' postings
(``memory_words``)."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import numpy as np
import psycopg
from psycopg import IsolationLevel

from zero_memory import errors
from zero_memory.clock import to_text
from zero_memory.domain.memory import Brief, Memory
from zero_memory.domain.records import Channel, Membership
from zero_memory.store.fulltext import POSTINGS_BUDGET, TextPlan, rank_postings
from zero_memory.store.ports.reader import Reader
from zero_memory.store.ports.search import CandidateMarks
from zero_memory.store.postgres.locks import SERIAL_LOCKS, lock_key
from zero_memory.store.postgres.params import statement
from zero_memory.store.postgres.postings import PASS_ENDED, SYSTEM_PASS, KeptPostings
from zero_memory.store.postgres.vectors import PostgresVectors, SearchedStore
from zero_memory.store.queries.accounts import MEMBERSHIPS, memberships_of
from zero_memory.store.queries.anchors import anchors_by_memory, anchors_sql
from zero_memory.store.queries.review import disputes_of, open_disputes_sql
from zero_memory.store.rows import BRIEF_COLUMNS, cap_payload
from zero_memory.store.sql import MEMORY_COLUMNS, SqlTx
from zero_memory.store.tables import copied_table

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


SESSIONS_SERVED = "SELECT memory_id, sessions FROM zm_sessions_served(%b::text[], %s, %s)"
SET_CALLER = "SELECT set_config('zm.caller', %s, true)"

# The rows beyond the limit each slice of the full-text ranking reads (``text_slice``).
TEXT_SLICE_MARGIN = 8


# The first live rows of a slice of the full-text ranking (``text_slice``), in its order, no more than are
# still wanted: the rows of the slice beyond them are not read (nor their vectors sent), where reading the
# whole slice and dropping the surplus here sent a third more vectors than recall keeps (at 100,000
# memories, 90 rows for 60 kept: the statement 1.3 ms instead of 1.8, p50 of 300 recalls).
RANKED_ROWS = (
    "SELECT seq, {columns} FROM unnest(%b::bigint[]) WITH ORDINALITY AS ranked(seq, place) "
    "JOIN memories USING (seq) WHERE status = 'live' AND scope = ANY(%s::text[]) ORDER BY place LIMIT %s"
)

# Each word's rows of the scopes given, by their seq: a range of memory_words's primary key each, read
# from the index alone (migration 0015). Sent as one string of 8-byte big-endian integers a word, which
# numpy reads as it is (``seqs_of``): as a bigint[], psycopg made a Python int of each of up to
# POSTINGS_BUDGET numbers, and numpy an array of the list (measured at 100,000 memories, 3,500 postings a
# query: 0.1 ms less a query, 0.4 ms at 16,000).
POSTINGS = (
    "SELECT q.word, (SELECT string_agg(int8send(seq), ''::bytea) FROM zm_word_postings(q.word, %s::text[])) "
    "AS seqs FROM unnest(%s::text[]) AS q(word)"
)


class TxStore(SearchedStore, Protocol):
    """What a transaction reads of ``PostgresStore``: whom this thread's transaction acts for, the common words."""

    def acting(self) -> Acting: ...
    def common_words(self, conn: psycopg.Connection[dict[str, Any]]) -> dict[str, float]: ...

    @property
    def postings(self) -> KeptPostings: ...


class PostgresTx(PostgresVectors, SqlTx):
    store: TxStore

    def __init__(self, store: TxStore, conn: psycopg.Connection[dict[str, Any]]) -> None:
        self.store = store
        self._conn = conn

    def _exec(self, sql: str, params: Sequence[Any] = ()) -> int:
        shared = statement(sql)
        return self.conn.execute(shared.sql, shared.params(params)).rowcount

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        shared = statement(sql)
        cursor = self.conn.execute(shared.sql, shared.params(params))
        return cursor.fetchall() if cursor.description else []

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
        if self._names_caller(uid):
            self.conn.execute(SET_CALLER, (uid,))
            self.store.acting().caller = uid

    def act_as_member(self, uid: str) -> list[Membership]:
        """``act_as`` and ``memberships`` in one round trip (a pipeline): the two statements every
        service's transaction starts with (``access.visibility``)."""
        if not self._names_caller(uid):
            return self.memberships(uid)
        shared = statement(MEMBERSHIPS)
        with self.conn.pipeline():
            self.conn.execute(SET_CALLER, (uid,))
            found = self.conn.execute(shared.sql, shared.params((uid,)))
        self.store.acting().caller = uid
        return memberships_of(found.fetchall())

    def _names_caller(self, uid: str) -> bool:
        """Whether acting for ``uid`` needs ``zm.caller`` set: not when the transaction acts as the system or
        for ``uid`` already; refused when it acts for another user."""
        acting = self.store.acting()
        if acting.system is not None or acting.caller == uid:
            return False
        if acting.caller is not None:
            raise errors.internal(f"one transaction acts for one user: {acting.caller}, then {uid}")
        return True

    def act_as_system(self, name: str) -> None:
        """Set ``zm.system`` for this transaction: the policies then show every row."""
        acting = self.store.acting()
        if acting.system is not None:
            return
        self.conn.execute("SELECT set_config('zm.system', %s, true)", (name,))
        acting.system = name

    def _word_counts(self, words: list[str]) -> tuple[int, dict[str, int]]:
        # Counted over every memory, whoever the caller, as SQLite counts them: the counting functions
        # answer a system pass only (migration 0021), so the counts are asked as the pass "statistics"
        # and the transaction's own setting is put back before anything else runs in it.
        # Common words from a sample of the table (as ANALYZE takes one, after the first ANALYZE);
        # the others are rare by that measure, and counting their rows through the index is cheap.
        with self.conn.pipeline():  # one round trip
            self.conn.execute(SYSTEM_PASS, ("statistics",))
            common = self.store.common_words(self.conn)
            rare = [w for w in words if w not in common]
            total = self.conn.execute("SELECT zm_memory_documents() AS n")
            found = self.conn.execute(
                "SELECT word, documents FROM zm_word_documents(%s::text[], %s)", (rare, POSTINGS_BUDGET + 1)
            )
            self.conn.execute(PASS_ENDED)
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
        return _sessions_of(self.conn.execute(SESSIONS_SERVED, (ids, to_text(since), str(channel))).fetchall())

    def candidate_marks(self, memory_ids: Collection[str], *, since: datetime, channel: Channel) -> CandidateMarks:
        """The three statements in one round trip (a pipeline), each list of ids one array: a recall asked
        them one after the other, ~0.2 ms each of waiting (its candidates' anchors were asked after ranking,
        of the ten it returns; now of all its candidates, which costs the server nothing it notices)."""
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return CandidateMarks()
        disputes, anchors = statement(open_disputes_sql(len(ids))), statement(anchors_sql(len(ids)))
        with self.conn.pipeline():  # the ids in binary, as they are one type (memory ids, text)
            disputed = self.conn.execute(disputes.binary_sql, disputes.params([*ids, *ids]))
            served = self.conn.execute(SESSIONS_SERVED, (ids, to_text(since), str(channel)))
            anchored = self.conn.execute(anchors.binary_sql, anchors.params(ids))
        return CandidateMarks(
            disputes_of(disputed.fetchall()), _sessions_of(served.fetchall()), anchors_by_memory(anchored.fetchall())
        )

    def text_candidates(self, plan: TextPlan, *, scopes: Collection[str], limit: int) -> list[str]:
        """SQLite's way: each matched word's rows of the scopes asked (their ``seq`` only, the postings of
        memory_words as this process keeps them, ``_postings``), ranked by ``rank_postings``; then the
        ranking a slice at a time, keeping live rows, until enough are kept. Ranking every matching row
        in SQL read and scored each whole row (up to the plan's postings budget): at 100,000
        memories a 3,500-row word took 9 ms that way, its postings from the GIN index 3 ms."""
        return [row["id"] for row in self._ranked_rows(plan, scopes, limit, "id")]

    def text_briefs(
        self, plan: TextPlan, *, scopes: Collection[str], limit: int, reader: Reader
    ) -> dict[str, tuple[Brief, np.ndarray | None]]:
        """``text_candidates``'s rows read with their briefs and vectors in the same statement (vectors in
        binary), instead of their ids first and the rows by id after: one round trip less, and the
        slice half as long again as ``limit`` rather than four times it (at 100,000 memories the 240-row
        slice took 4 ms under load, and every row of it was live)."""
        found: dict[str, tuple[Brief, np.ndarray | None]] = {}
        rows = self._ranked_rows(plan, scopes, limit, f"{BRIEF_COLUMNS}, embedding")
        if self._rows_read is not None:
            self._rows_read()  # a vector search goes out (``BriefSearch``): nothing else reads until it is back
        for row in rows:
            if (read := self._readable_brief(row, reader)) is not None:
                found[row["id"]] = read
        return found

    def _ranked_rows(self, plan: TextPlan, scopes: Collection[str], limit: int, columns: str) -> list[dict[str, Any]]:
        """Up to ``limit`` live rows of ``scopes`` holding the plan's matched words, in the order of
        ``rank_postings``, each with ``columns``."""
        if not plan.matched or not scopes or limit <= 0:
            return []
        readable = sorted(scopes)
        postings = self._postings(list(plan.matched), readable)
        ranked = rank_postings(postings, [plan.weights[w] for w in plan.matched])
        kept: list[dict[str, Any]] = []
        query, step = RANKED_ROWS.format(columns=columns), text_slice(limit)
        for start in range(0, len(ranked), step):
            part = ranked[start : start + step].tolist()
            wanted = limit - len(kept)
            kept += self.conn.execute(query, (part, readable, wanted), binary=True).fetchall()
            if len(kept) >= limit:
                break
        return kept

    def _postings(self, words: list[str], scopes: list[str]) -> list[np.ndarray]:
        """Each word's postings of ``scopes`` (seqs, in order): in a read transaction from what this process
        keeps (``KeptPostings``), else from the table."""
        if self.conn.isolation_level == IsolationLevel.REPEATABLE_READ:
            return self.store.postings.read(self.conn, words, scopes)
        rows = self.conn.execute(POSTINGS, (scopes, words), binary=True).fetchall()
        seqs = {r["word"]: r["seqs"] for r in rows}
        return [seqs_of(seqs.get(word)) for word in words]


def seqs_of(value: bytes | None) -> np.ndarray:
    """A word's postings as ``POSTINGS`` sends them (None: no row holds it), as int64 in this machine's order."""
    if not value:
        return np.zeros(0, dtype=np.int64)
    return np.frombuffer(value, dtype=">i8").astype(np.int64)


def _sessions_of(rows: Sequence[dict[str, Any]]) -> dict[str, int]:
    return {r["memory_id"]: int(r["sessions"]) for r in rows}


def text_slice(limit: int) -> int:
    """How many of the ranked rows each statement of ``_ranked_rows`` looks among for the live ones it still
    wants: ``limit`` and half as many again for rows no longer live (memory_words keeps a superseded or
    forgotten memory's words; a store with more of them than that reads another slice)."""
    return limit + max(TEXT_SLICE_MARGIN, limit // 2)


@dataclass(slots=True)
class Acting:
    """Whom the current transaction of a thread acts for, as set in its ``zm.*`` settings."""

    caller: str | None = None
    system: str | None = None
