"""What a PostgreSQL server process keeps of full text between recalls: each word's postings, every scope's.

A recall read each of its matched words' postings from ``memory_words`` every
time: at 100,000 memories ~16,000 rows, 3.4 ms of an 11-12 ms recall in the
server (1.1 ms of it the row policy's test of each row). They change only when
a memory arrives, moves to another scope or is removed, so a process keeps
what it read, as of a snapshot of the database (``pg_snapshot``): each word
kept holds every posting of every transaction that snapshot shows. At each
recall one statement brings it forward to the recall's own snapshot, reading
the memories whose postings a transaction the kept snapshot does not show
wrote (``postings_xid``, migration 0029: usually none) and adding them to the
words kept. A transaction in progress when the snapshot was taken is read
once it has committed, whatever seq it took: two users' writes do not wait
for each other, and the first seq taken may commit last. When memories were
removed since (``postings_removed``), or more were written than a catch-up
reads (an import by another process), what is kept starts again.

Every scope's postings are kept, read as a system pass; each recall takes
those of the scopes it may read. The rows themselves are read afterwards
under the caller's row policy (``RANKED_ROWS`` in tx.py), so what is kept
decides at most in which order rows are looked at, never what a caller gets.

Only a read transaction (REPEATABLE READ: one snapshot, and none of its own
writes) uses it; a write transaction reads the postings as before.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg

KEPT_POSTINGS = 2_000_000  # postings kept at most (24 MB with their scopes): a 100k store's rare words 1.1 million
CATCH_UP_ROWS = 2_000  # memories a recall reads to bring what is kept forward; more, and it starts again
# What is kept starts again at least this often: whatever it missed (a database restored from another
# server, whose transaction ids are not this one's) it misses no longer than that.
KEPT_SECONDS = 600.0

# A system pass named for what it reads (migration 0021: full text's counts answer a system pass only),
# the transaction's own zm.system kept in zm.counted_for and put back after.
SYSTEM_PASS = (
    "SELECT set_config('zm.counted_for', coalesce(current_setting('zm.system', true), ''), true), "
    "set_config('zm.system', %s, true)"
)
PASS_ENDED = "SELECT set_config('zm.system', current_setting('zm.counted_for'), true)"

SNAPSHOT = "SELECT pg_current_snapshot()::text AS now, true AS kept, NULL::bigint AS seq"
# The memories whose postings a transaction ``since`` does not show wrote (one row of NULLs if none), with
# the transaction's own snapshot, and whether ``since`` shows the last removal of memories. A transaction id
# at or past the snapshot's xmax was not this server's (a database restored from another, whose ids ran
# higher): written before anything kept here, never caught up, and no removal since.
CATCH_UP = (
    "WITH x AS (SELECT pg_current_snapshot() AS now, %(since)s::pg_snapshot AS since) "
    "SELECT x.now::text AS now, (SELECT r.xid >= pg_snapshot_xmax(x.now) OR pg_visible_in_snapshot(r.xid, x.since) "
    "FROM postings_removed r) AS kept, m.seq, m.scope, tsvector_to_array(m.content_tsv) AS words "
    "FROM x LEFT JOIN LATERAL ("
    "SELECT seq, scope, content_tsv FROM memories "
    "WHERE postings_xid >= pg_snapshot_xmin(x.since) AND postings_xid < pg_snapshot_xmax(x.now) "
    "AND NOT pg_visible_in_snapshot(postings_xid, x.since) "
    "ORDER BY postings_xid LIMIT %(rows)s) AS m ON true"  # in the index's order: a generic plan walks it
)
# Each word's postings of every scope, a row a scope, the seqs as 8-byte big-endian integers in order; and
# whether the word is one lexeme of its own (kept only then: a catch-up finds a memory's words by lexeme).
WORD_POSTINGS = (
    "SELECT q.word, tsvector_to_array(to_tsvector('simple', q.word)) = ARRAY[q.word] AS plain, p.scope, p.seqs "
    "FROM unnest(%s::text[]) AS q(word) LEFT JOIN LATERAL ("
    "SELECT scope, string_agg(int8send(seq), ''::bytea ORDER BY seq) AS seqs "
    "FROM zm_word_scoped_postings(q.word) GROUP BY scope) AS p ON true"
)


@dataclass(frozen=True, slots=True)
class Snap:
    """A ``pg_snapshot``: its text, and a key that orders the snapshots one server takes as it took them
    (a later one has no lower xmax, then no lower xmin, then no more transactions in progress)."""

    text: str
    key: tuple[int, int, int]

    @classmethod
    def parse(cls, text: str) -> Snap:
        xmin, xmax, xip = text.split(":")
        return cls(text, (int(xmax), int(xmin), -len([x for x in xip.split(",") if x])))


@dataclass(frozen=True, slots=True)
class Postings:
    """A word's postings: the memories' seqs in order, and each one's scope (a code of ``KeptPostings``)."""

    seqs: np.ndarray
    scopes: np.ndarray

    def of(self, codes: Sequence[int]) -> np.ndarray:
        """The seqs of the scopes coded ``codes``, in order."""
        if len(codes) == 1:
            return self.seqs[self.scopes == codes[0]]
        return self.seqs[np.isin(self.scopes, codes)]

    def joined(self, seqs: np.ndarray, scopes: np.ndarray) -> Postings:
        """These postings with ``seqs`` added, each in its scope (a seq held already: its new scope)."""
        all_seqs = np.concatenate((self.seqs, seqs))
        all_scopes = np.concatenate((self.scopes, scopes))
        order = np.argsort(all_seqs, kind="stable")  # the new after the old among equal seqs
        ordered = all_seqs[order]
        last = np.ones(len(ordered), dtype=bool)
        last[:-1] = ordered[1:] != ordered[:-1]
        return Postings(ordered[last], all_scopes[order][last])


EMPTY = Postings(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32))


class KeptPostings:
    """{word: its postings} as of one snapshot, for every thread of one process."""

    def __init__(
        self,
        limit: int = KEPT_POSTINGS,
        catch_up_rows: int = CATCH_UP_ROWS,
        seconds: float = KEPT_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit, self.catch_up_rows, self.seconds, self._clock = limit, catch_up_rows, seconds, clock
        self._lock = threading.Lock()
        self._at: Snap | None = None
        self._began = 0.0
        self._words: dict[str, Postings] = {}
        self._codes: dict[str, int] = {}
        self._held = 0

    def read(
        self, conn: psycopg.Connection[dict[str, Any]], words: Sequence[str], scopes: Collection[str]
    ) -> list[np.ndarray]:
        """Each word's postings of ``scopes`` (seqs, in order) as ``conn``'s read transaction sees them, or
        more: a memory removed or moved out of ``scopes`` may still be among them."""
        with self._lock:
            if self._at is not None and self._clock() - self._began >= self.seconds:
                self._at, self._words, self._held = None, {}, 0
            since = self._at
            missing = [w for w in words if w not in self._words]
        with conn.pipeline():  # one round trip
            conn.execute(SYSTEM_PASS, ("postings",))
            caught = conn.execute(
                SNAPSHOT if since is None else CATCH_UP,
                None if since is None else {"since": since.text, "rows": self.catch_up_rows + 1},
                binary=True,
            )
            filled = conn.execute(WORD_POSTINGS, (missing,), binary=True) if missing else None
            conn.execute(PASS_ENDED)
        news = caught.fetchall()
        now = Snap.parse(news[0]["now"])
        found = self._found(since, now, news, filled.fetchall() if filled is not None else [], words)
        lost = [w for w in words if w not in found]
        if lost:  # kept when the read began, no longer (started again meanwhile): read as the others were
            with conn.pipeline():
                conn.execute(SYSTEM_PASS, ("postings",))
                filled = conn.execute(WORD_POSTINGS, (lost,), binary=True)
                conn.execute(PASS_ENDED)
            found |= self._found(since, now, [], filled.fetchall(), lost)
        with self._lock:
            codes = [c for s in scopes if (c := self._codes.get(s)) is not None]
        return [found[w].of(codes) if codes else EMPTY.seqs for w in words]

    def _found(
        self,
        since: Snap | None,
        now: Snap,
        news: list[dict[str, Any]],
        read: list[dict[str, Any]],
        words: Sequence[str],
    ) -> dict[str, Postings]:
        """What the transaction of snapshot ``now`` reads of ``words``: kept as of ``now`` or later once the
        catch-up ``news`` is added, else as ``read`` them; those ``read`` kept for the next recalls."""
        with self._lock:
            if news:
                self._bring_forward(since, now, news)
            found = {w: p for w in words if (p := self._words.get(w)) is not None}
            for word, postings, plain in self._gathered(read):
                found[word] = postings
                if plain and self._at is not None and now.key >= self._at.key:
                    self._keep(word, postings)
            return found

    def _bring_forward(self, since: Snap | None, now: Snap, news: list[dict[str, Any]]) -> None:
        """Move what is kept to ``now`` with what was written between ``since`` (what was kept when the
        read began) and ``now``, unless another thread took it as far meanwhile."""
        if self._at is not None and now.key <= self._at.key:
            return
        rows = [r for r in news if r["seq"] is not None]
        if since is None:
            if self._at is None:
                self._at, self._began = now, self._clock()  # nothing was kept: nothing to bring forward
            return  # another thread began keeping meanwhile, from a snapshot this read did not catch up from
        if self._at is None or not news[0]["kept"] or len(rows) > self.catch_up_rows:
            self._words, self._held, self._began = {}, 0, self._clock()
        else:
            self._add(rows)
        self._at = now

    def _add(self, rows: list[dict[str, Any]]) -> None:
        """Each kept word's postings with the memories of ``rows`` that hold it."""
        added: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for row in rows:
            code = self._code(row["scope"])
            for word in row["words"]:
                if word in self._words:
                    added[word].append((row["seq"], code))
        for word, pairs in added.items():
            seqs, codes = zip(*pairs, strict=True)
            self._keep(word, self._words[word].joined(np.array(seqs, np.int64), np.array(codes, np.int32)))

    def _gathered(self, rows: list[dict[str, Any]]) -> list[tuple[str, Postings, bool]]:
        """``WORD_POSTINGS``'s rows, a word's scopes each a row, as each word's postings."""
        parts: dict[str, list[tuple[np.ndarray, int]]] = defaultdict(list)
        plain: dict[str, bool] = {}
        for row in rows:
            plain[row["word"]] = bool(row["plain"])
            if row["seqs"]:
                parts[row["word"]].append((np.frombuffer(row["seqs"], dtype=">i8"), self._code(row["scope"])))
        gathered = []
        for word, is_plain in plain.items():
            pieces = parts.get(word, [])
            if not pieces:
                gathered.append((word, EMPTY, is_plain))
                continue
            seqs = np.concatenate([p for p, _ in pieces]).astype(np.int64)
            scopes = np.concatenate([np.full(len(p), code, dtype=np.int32) for p, code in pieces])
            order = np.argsort(seqs, kind="stable")
            gathered.append((word, Postings(seqs[order], scopes[order]), is_plain))
        return gathered

    def _keep(self, word: str, postings: Postings) -> None:
        was = self._words.get(word)
        grown = len(postings.seqs) - (len(was.seqs) if was is not None else 0)
        if self._held + grown > self.limit:
            self._words, self._held, grown = {}, 0, len(postings.seqs)
        self._words[word] = postings
        self._held += grown

    def _code(self, scope: str) -> int:
        code = self._codes.get(scope)
        if code is None:
            code = self._codes[scope] = len(self._codes)
        return code
