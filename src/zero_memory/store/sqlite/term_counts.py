"""The SQLite store's word counts for full text, kept while the database does not change.

FTS5 keeps no count of the memories holding a word: ``memories_fts_vocab``
walks the word's postings to count them, which for a word nearly every memory
holds ("service", "use") took 1.7-1.9 ms of each recall at 100,000 memories.
The counts change only when memories do, and every change of a memory moves
the ``rev`` counter (a trigger), so counts read while the counter had one
value hold for as long as it keeps it: the next query asking the same words
reads them from here, exact.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

Count = Callable[[list[str]], tuple[int, dict[str, int]]]

MAX_WORDS = 100_000  # a bound on the memory the cache takes; it starts again when full


class TermCounts:
    """(documents, {word: documents holding it}) as of one value of the change counter."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rev = -1
        self._documents = 0
        self._counts: dict[str, int] = {}

    def lookup(self, rev: int, words: list[str], count: Count) -> tuple[int, dict[str, int]]:
        """The counts of ``words`` at counter value ``rev``; ``count`` reads those not kept (and the total)."""
        with self._lock:
            if rev == self._rev and all(word in self._counts for word in words):
                return self._documents, {word: self._counts[word] for word in words}
        documents, counts = count(words)
        with self._lock:
            if rev != self._rev or len(self._counts) >= MAX_WORDS:
                self._rev, self._documents, self._counts = rev, documents, {}
            self._counts.update(counts)
        return documents, counts
