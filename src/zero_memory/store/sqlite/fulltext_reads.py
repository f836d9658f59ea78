"""Full text on the SQLite store: the query's word counts and its candidates' rows, from FTS5 through the caches.

The counts and each word's postings are kept between recalls (``word_cache.py``),
the rows in the row cache (``row_cache.py``). A transaction that wrote reads the
database itself: its writes are not what others see, and may yet roll back.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from zero_memory.domain.memory import Brief
from zero_memory.store.fulltext import POSTINGS_BUDGET, TextPlan, rank_postings
from zero_memory.store.ports.reader import SYSTEM, Reader
from zero_memory.store.sqlite.row_cache import Cached
from zero_memory.store.sqlite.word_cache import Rows, WordCache

MAX_SLICE = 500  # full-text candidates' rows read in one statement at most
MAX_POSTINGS = 2_000_000  # row numbers kept at most (16 MB: a 100k store's words within the budget hold 1.1 million)
MAX_WORDS = 100_000  # word counts kept at most

Count = tuple[int, bool]  # memories holding a word, and whether that is a lower bound (counted up to a limit)


def _phrase(word: str) -> str:
    """An FTS5 query matching one word, whatever it holds."""
    return '"' + word.replace('"', '""') + '"'


def read_postings(rows: Rows, word: str, after: int) -> np.ndarray:
    """The row numbers above ``after`` holding ``word``, in order (read-only: shared by every query asking it)."""
    if after > 0:
        numbers = np.array(_numbers_above(rows.conn, word, after), dtype=np.int64)
    else:
        # One string parsed by numpy: a Python row per posting took 3-4 times as long (0.9 ms for a word of
        # 3,400 memories, 0.24 ms so).
        found = rows.conn.execute(
            "SELECT group_concat(rowid, ' ') FROM memories_fts WHERE memories_fts MATCH ?", (_phrase(word),)
        ).fetchone()
        numbers = np.fromstring(found[0], dtype=np.int64, sep=" ") if found and found[0] else np.zeros(0, np.int64)
    numbers.flags.writeable = False
    return numbers


def _numbers_above(conn: sqlite3.Connection, word: str, after: int) -> list[int]:
    """The row numbers above ``after`` holding ``word``: the few last of its postings, read from the end until
    one is at or below it (at 100,000 memories 40-80 us a word, where asking FTS5 for the rows above the number
    took 40-190 us for a word most memories hold: it walked their postings)."""
    cursor = conn.execute(
        "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rowid DESC", (_phrase(word),)
    )
    found: list[int] = []
    try:
        for (seq,) in cursor:
            if seq <= after:
                break
            found.append(seq)
    finally:
        cursor.close()
    found.reverse()
    return found


def join_postings(kept: np.ndarray, above: np.ndarray) -> np.ndarray:
    if not len(above):
        return kept
    joined = np.concatenate([kept, above])
    joined.flags.writeable = False  # shared by every query asking the word
    return joined


def read_count(rows: Rows, word: str, after: int) -> Count:
    """The memories above row number ``after`` holding ``word``."""
    conn = rows.conn
    if after > 0:
        return len(_numbers_above(conn, word, after)), False
    held = conn.execute("SELECT doc FROM memories_fts_vocab WHERE term = ?", (word,)).fetchone()
    if held is not None:
        return int(held[0]), False
    # Not in the vocabulary as spelt (the tokenizer folds diacritics): count what a search finds, up to the
    # budget (a word past it is not read; its count only needs to say so).
    found = conn.execute(
        "SELECT count(*) FROM (SELECT 1 FROM memories_fts WHERE memories_fts MATCH ? LIMIT ?)",
        (_phrase(word), POSTINGS_BUDGET + 1),
    ).fetchone()
    count = int(found[0])
    return count, count > POSTINGS_BUDGET


def join_counts(kept: Count, above: Count) -> Count:
    """A count that reached the limit stays there, as a new count would."""
    return kept if kept[1] else (kept[0] + above[0], False)


def postings_cache() -> WordCache[np.ndarray]:
    return WordCache(read_postings, join_postings, len, MAX_POSTINGS)


def counts_cache() -> WordCache[Count]:
    return WordCache(read_count, join_counts, lambda _: 1, MAX_WORDS)


class FullTextReads:
    """Mixed into ``SQLiteTx``: ``conn``, ``store``, ``committed_rev`` and ``cached_rows`` come from it; it gives the
    caches the rows' ``top_seq`` and ``grown_only``."""

    conn: sqlite3.Connection
    store: Any
    _changes: int

    if TYPE_CHECKING:

        def committed_rev(self) -> int: ...

        def cached_rows(self, seqs: Sequence[int]) -> dict[int, Cached]: ...

    def _wrote(self) -> bool:
        """Whether this transaction wrote: then it reads the database, not what is kept of what others see."""
        return self.conn.total_changes != self._changes

    def top_seq(self) -> int:
        # max(seq) is an index lookup; count(*) would scan the table.
        found = self.conn.execute("SELECT max(seq) FROM memories").fetchone()
        return int(found[0]) if found and found[0] else 0

    def grown_only(self, rev: int, top: int) -> bool:
        # By the index of rev (the few rows changed since), never by row number (``+seq``: every row below).
        found = self.conn.execute(
            "SELECT 1 FROM memories WHERE rev > ? AND +seq <= ? "
            "UNION ALL SELECT 1 FROM memory_removals WHERE rev > ? AND +seq <= ? LIMIT 1",
            (rev, top, rev, top),
        ).fetchone()
        return found is None

    def _word_counts(self, words: list[str]) -> tuple[int, dict[str, int]]:
        """(the memories there are, {word: the memories holding it}); "there are" is the highest row number."""
        if self._wrote():
            return self.top_seq(), {word: read_count(self, word, 0)[0] for word in words}
        rev, counts = self.committed_rev(), self.store.counts
        held = {word: counts.lookup(rev, self, word)[0] for word in words}
        return counts.top(rev, self), held

    def text_candidates(self, plan: TextPlan, *, scopes: Collection[str], limit: int) -> list[str]:
        return [row.brief.id for row in self._text_rows(plan, scopes, limit)]

    def text_briefs(
        self, plan: TextPlan, *, scopes: Collection[str], limit: int, reader: Reader
    ) -> dict[str, tuple[Brief, np.ndarray | None]]:
        """The candidates' briefs and vectors read as they are chosen, by row number, through the row cache
        (``text_candidates`` then ``briefs_with_vectors`` read every row twice, the second time through the
        index of ids)."""
        found: dict[str, tuple[Brief, np.ndarray | None]] = {}
        for row in self._text_rows(plan, scopes, limit):
            brief = row.brief
            if reader is SYSTEM or brief.scope in reader.readable:  # type: ignore[union-attr]
                vector = None if row.embedding is None else np.frombuffer(row.embedding, dtype=np.float32)
                found[brief.id] = (brief, vector)
        return found

    def _text_rows(self, plan: TextPlan, scopes: Collection[str], limit: int) -> list[Cached]:
        """Up to ``limit`` live rows of ``scopes`` holding a matched word, best first."""
        if not plan.matched or not scopes or limit <= 0:
            return []
        # Each matched word's postings (rare words: within the plan's budget), summed into one score per row.
        ranked = rank_postings([self._postings(word) for word in plan.matched], [plan.weights[w] for w in plan.matched])
        scopes = frozenset(scopes)
        kept: list[Cached] = []
        # Walk the ranking a slice at a time, keeping live rows of the scopes asked, until enough are kept:
        # first as many as wanted (most pass: each row read is a page read), then twice as many each time.
        start, step = 0, limit
        while start < len(ranked) and len(kept) < limit:
            part = ranked[start : start + step].tolist()
            rows = self.cached_rows(part)
            kept.extend(
                row
                for seq in part
                if (row := rows.get(seq)) is not None and row.brief.live and row.brief.scope in scopes
            )
            start, step = start + step, min(step * 2, MAX_SLICE)
        return kept[:limit]

    def _postings(self, word: str) -> np.ndarray:
        if self._wrote():
            return read_postings(self, word, 0)
        return self.store.postings.lookup(self.committed_rev(), self, word)
