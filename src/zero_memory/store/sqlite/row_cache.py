"""Recall's rows kept in memory while they do not change: each memory's brief and vector, by row number.

A recall reads about a hundred rows (the vector side's candidates and the full
text's), each whole with its 2 KB vector, and made them into briefs again
every time: at 1,000-50,000 memories that was a third of its cost beside the
query's embedding. Every change of a memory row moves the ``rev`` counter and
stamps the row with the new value (triggers, migrations 0001 and 0013: an
insert, a change of its status, scope, owner, content or vector, a removal),
and no other column a brief holds is ever changed. So rows read while the
counter had one value hold for as long as it keeps it; when it moves, whoever
moved it (this process or another), the rows stamped above the value the
cache was made at are forgotten and the rest still hold.

A transaction uses the cache only when it sees the counter at the cache's
value or later (the cache is then brought forward to it) and has written
nothing itself: one that began before another moved the counter reads the
database, as does one reading its own writes, which may yet roll back.

When full, rows chosen at random make room, an eighth of the cache at a
time. The oldest first (as this cache did) served nothing to recalls that
come round again to more rows than it holds, even a few more: each row was
forgotten just before it was asked again (at 100,000 memories, 300 different
queries read 26,000 rows with the postings budget of 20,000, and the 25,000
rows kept served almost none of them). Forgotten at random, a working set a
tenth larger than the cache is still mostly served from it.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Collection
from typing import NamedTuple

from zero_memory.domain.memory import Brief

MAX_ROWS = 40_000  # ~110 MB of 512-dimension vectors and their briefs (2.8 KB a row): the rows of 400-500 recalls
ROOM = 8  # when full, 1/ROOM of the rows are forgotten at once


class Cached(NamedTuple):
    """A memory row as recall reads it."""

    brief: Brief
    owner: str
    embedding: bytes | None
    embedding_dim: int | None


Changed = Callable[[int, int], list[int]]  # (after rev, at most) -> seqs stamped above it, removals included


class RowCache:
    def __init__(self, max_rows: int = MAX_ROWS) -> None:
        self.max_rows = max_rows
        self._lock = threading.Lock()
        self._rev = -1
        self._rows: dict[int, Cached] = {}
        self._random = random.Random(0)  # which rows make room: a fixed sequence, so runs read alike

    def serves(self, rev: int, changed: Changed) -> bool:
        """Whether the cache holds rows as the database was at counter value ``rev``: brought forward to
        it when behind (``changed`` names the rows to forget); False when it is already past it."""
        with self._lock:
            if rev <= self._rev:
                return rev == self._rev
            if not self._rows:  # nothing to forget
                self._rev = rev
                return True
            since = self._rev
        seqs = changed(since, self.max_rows)
        with self._lock:
            if self._rev != since:  # another thread moved it meanwhile
                return rev == self._rev
            if len(seqs) >= self.max_rows:
                self._rows.clear()
            for seq in seqs:
                self._rows.pop(seq, None)
            self._rev = rev
            return True

    def get(self, rev: int, seqs: Collection[int]) -> dict[int, Cached]:
        """The rows of ``seqs`` held as of ``rev`` (none if the cache is at another value)."""
        with self._lock:
            if rev != self._rev:
                return {}
            rows = self._rows
            return {seq: rows[seq] for seq in seqs if seq in rows}

    def put(self, rev: int, rows: dict[int, Cached]) -> None:
        """Keep rows read as of ``rev`` (if the cache is still at that value)."""
        with self._lock:
            if rev != self._rev:
                return
            self._rows.update(rows)
            excess = len(self._rows) - self.max_rows
            if excess > 0:
                room = excess + self.max_rows // ROOM
                for seq in self._random.sample(list(self._rows), min(room, len(self._rows))):
                    del self._rows[seq]

    def clear(self) -> None:
        with self._lock:
            self._rev = -1
            self._rows.clear()
