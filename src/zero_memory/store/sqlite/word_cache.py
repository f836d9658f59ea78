"""What the SQLite store keeps of full text between recalls: each word's postings, or its count, by word.

FTS5 keeps no count of the memories holding a word (``memories_fts_vocab``
walks the word's postings: 1.7-1.9 ms of a recall for a word nearly every
memory holds at 100,000 memories), and a query's postings are read again at
every recall (0.2-0.6 ms for 5,000 row numbers at 1,000-50,000 memories). Both
change only when memories do, and every change of a memory moves the ``rev``
counter (a trigger, migrations 0001 and 0013), so what was read while it had
one value holds while it keeps it.

When it moves, the cache is carried forward instead of forgotten if every
change since was the arrival of new rows: none at or below the highest row
number it was made up to (its ``top``) was changed or removed. Then what it
holds of a word still holds for those rows, and the word is brought up to
date by reading what the rows above that number add (FTS5 seeks to them).
That is what a store mostly sees: memories remembered one at a time between
recalls, and a bulk import by another process, where forgetting everything at
every change made each recall read all its words again (at 10,000 memories a
recall after a write cost 0.75 ms more than one before it). Any other change
(a memory forgotten, rewritten, moved to another scope) and the cache starts
again, as it does when it grows past its bound.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

V = TypeVar("V")


class Rows(Protocol):
    """The memory rows as one read transaction sees them."""

    conn: sqlite3.Connection

    def top_seq(self) -> int:
        """The highest row number (0 for none)."""

    def grown_only(self, rev: int, top: int) -> bool:
        """Whether every row stamped above ``rev`` is above row number ``top`` (removals included)."""


class WordCache(Generic[V]):
    """{word: (what was read of it, the row number it holds up to)} as of one value of the change counter.

    ``read(rows, word, after)`` reads what the rows above row number ``after``
    hold of a word (all of them with ``after`` 0), ``join`` adds such a read to
    what is kept, and ``size`` is what a value costs against ``limit``."""

    def __init__(
        self,
        read: Callable[[Rows, str, int], V],
        join: Callable[[V, V], V],
        size: Callable[[V], int],
        limit: int,
    ) -> None:
        self._read, self._join, self._size, self.limit = read, join, size, limit
        self._lock = threading.Lock()
        self._rev = -1
        self._top = 0
        self._held = 0
        self._words: dict[str, tuple[V, int]] = {}

    def lookup(self, rev: int, rows: Rows, word: str) -> V:
        """What ``word`` holds as of counter value ``rev`` (the value ``rows``, a read transaction, sees)."""
        top = self._at(rev, rows)
        if top is None:
            return self._read(rows, word, 0)  # a transaction begun before the last change: not kept
        with self._lock:
            kept = self._words.get(word) if rev == self._rev else None
        if kept is not None and kept[1] == top:
            return kept[0]
        value = self._read(rows, word, 0) if kept is None else self._join(kept[0], self._read(rows, word, kept[1]))
        with self._lock:
            if rev != self._rev:
                return value  # moved on meanwhile
            was = self._words.get(word)
            grown = self._size(value) - (self._size(was[0]) if was is not None else 0)
            if self._held + grown > self.limit:
                self._words, self._held, grown = {}, 0, self._size(value)
            self._words[word] = (value, top)
            self._held += grown
        return value

    def top(self, rev: int, rows: Rows) -> int:
        """The highest row number as of ``rev``."""
        top = self._at(rev, rows)
        return rows.top_seq() if top is None else top

    def kept(self, rev: int, word: str) -> V | None:
        """What is kept of ``word`` as of ``rev``, without reading (None if nothing is)."""
        with self._lock:
            found = self._words.get(word) if rev == self._rev else None
            return None if found is None or found[1] != self._top else found[0]

    def _at(self, rev: int, rows: Rows) -> int | None:
        """The row number the cache holds words up to as of ``rev``, brought forward to it when behind; None
        when it is past ``rev`` already."""
        with self._lock:
            if rev <= self._rev:
                return self._top if rev == self._rev else None
            since, top, empty = self._rev, self._top, not self._words
        carried = not empty and rows.grown_only(since, top)
        now_top = rows.top_seq()
        with self._lock:
            if self._rev != since:  # another thread moved it meanwhile
                return self._top if rev == self._rev else None
            if not carried:
                self._words, self._held = {}, 0
            self._rev, self._top = rev, now_top
            return now_top
