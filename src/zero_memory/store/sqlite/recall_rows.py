"""The rows recall reads on the SQLite store, through the row cache (``store/sqlite/row_cache.py``).

Both sides of a recall read candidates by row number: the vector side the
rows the index proposes, the full text the rows holding the query's rarest
words. Each row comes from the cache when it holds it as this transaction sees
the database, else from the database (and is kept); the filters a search
applies (live, of the scopes and kinds asked for, a vector of this dimension)
are then applied to the rows as read, as the SQL did before.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from zero_memory.domain.memory import Brief, Status
from zero_memory.store.rows import BRIEF_COLUMNS, brief_from_row, marks
from zero_memory.store.sqlite.row_cache import Cached, RowCache

CHUNK = 500  # row numbers or ids bound in one statement at most
_NAMES = BRIEF_COLUMNS.split(", ")


class RecallRows:
    """Mixed into ``SQLiteTx``: ``conn``, ``read_only``, ``row_cache`` and ``committed_rev`` come from it."""

    conn: Any

    @property
    def row_cache(self) -> RowCache:
        raise NotImplementedError

    def read_only(self) -> bool:
        raise NotImplementedError

    def committed_rev(self) -> int:
        raise NotImplementedError

    def cached_rows(self, seqs: Sequence[int]) -> dict[int, Cached]:
        """The rows of ``seqs`` that exist, as this transaction sees them, by seq."""
        cache = self.row_cache
        rev = self.committed_rev() if self.read_only() else None
        if rev is not None and not cache.serves(rev, self._changed_since):
            rev = None
        found = cache.get(rev, seqs) if rev is not None else {}
        missing = sorted(seq for seq in seqs if seq not in found)
        read: dict[int, Cached] = {}
        for start in range(0, len(missing), CHUNK):
            chunk = missing[start : start + CHUNK]
            for values in self.conn.execute(
                f"SELECT seq, owner, embedding, embedding_dim, {BRIEF_COLUMNS} FROM memories "
                f"WHERE seq IN ({marks(len(chunk))})",
                chunk,
            ).fetchall():
                brief = brief_from_row(dict(zip(_NAMES, values[4:], strict=True)))
                read[values[0]] = Cached(brief, values[1], values[2], values[3])
        if rev is not None and read:
            cache.put(rev, read)
        found.update(read)
        return found

    def _changed_since(self, rev: int, limit: int) -> list[int]:
        """Rows stamped above ``rev``, removed ones included (at most ``limit``)."""
        cursor = self.conn.execute(
            "SELECT seq FROM memories WHERE rev > ? UNION ALL SELECT seq FROM memory_removals WHERE rev > ? LIMIT ?",
            (rev, rev, limit),
        )
        return [row[0] for row in cursor.fetchall()]


def usable(
    rows: dict[int, Cached],
    seqs: Sequence[int],
    scopes: Collection[str] | None,
    kinds: Collection[str] | None,
    owner: str | None,
    dim: int,
) -> tuple[list[Brief], list[bytes]]:
    """The vector side's filter over the rows of ``seqs``, in their order: the briefs of the live rows of the
    owner, scopes and kinds asked for with a vector of ``dim`` dimensions, and those vectors' float32 bytes.
    One loop with nothing called a row: it walks the hundred rows a recall proposes (a call or two a row
    was a quarter of reading them)."""
    briefs: list[Brief] = []
    blobs: list[bytes] = []
    size = 4 * dim
    live = Status.LIVE
    for seq in seqs:
        row = rows.get(seq)
        if row is None:
            continue
        brief, blob = row.brief, row.embedding
        if (
            brief.status is live
            and (scopes is None or brief.scope in scopes)
            and (kinds is None or brief.kind in kinds)
            and (owner is None or row.owner == owner)
            and blob is not None
            and row.embedding_dim == dim
            and len(blob) == size
        ):
            briefs.append(brief)
            blobs.append(blob)
    return briefs, blobs
