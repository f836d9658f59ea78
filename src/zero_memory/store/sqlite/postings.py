"""The SQLite store's postings of a word (the rows holding it), kept while the database does not change.

Full text reads the row numbers of each of the query's matched words from
FTS5 at every recall (up to the plan's budget of 20,000 together: at 1,000-
50,000 memories 0.2-0.6 ms a query for 5,000 of them, ~70 ns a row number). Like the word counts (``term_counts.py``),
they change only when memories do, and every change of a memory moves the
``rev`` counter: postings read while it had one value hold for as long as it
keeps it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

MAX_POSTINGS = 2_000_000  # row numbers kept at most (16 MB: a 100k store's words within the budget hold
# 1.1 million); the cache starts again when full


class Postings:
    """{word: its rows' numbers} as of one value of the change counter."""

    def __init__(self, max_postings: int = MAX_POSTINGS) -> None:
        self.max_postings = max_postings
        self._lock = threading.Lock()
        self._rev = -1
        self._held = 0
        self._rows: dict[str, np.ndarray] = {}

    def lookup(self, rev: int, word: str, read: Callable[[str], np.ndarray]) -> np.ndarray:
        """The rows holding ``word`` at counter value ``rev``; ``read`` reads them when not kept."""
        with self._lock:
            if rev == self._rev and word in self._rows:
                return self._rows[word]
        rows = read(word)
        rows.flags.writeable = False  # shared by every query asking the word
        with self._lock:
            if rev != self._rev or self._held + len(rows) > self.max_postings:
                if rev < self._rev:
                    return rows  # a transaction begun before the last change: not kept
                self._rev, self._held, self._rows = rev, 0, {}
            if word not in self._rows:
                self._rows[word] = rows
                self._held += len(rows)
        return rows
