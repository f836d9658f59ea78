"""What the vector index reads from the database, inside a transaction: changes by counter, rows, states."""

from __future__ import annotations

from collections.abc import Collection
from typing import Protocol

# (seq, owner, scope, kind, live, embedding, rev)
Row = tuple[int, str, str, str, bool, bytes | None, int]
# (seq, owner, scope, kind, live, has a vector of this index's dimension, rev)
State = tuple[int, str, str, str, bool, bool, int]


class Source(Protocol):
    """What the index reads from the database, inside the caller's transaction."""

    def changed_rows(self, after_rev: int, limit: int) -> list[Row]: ...
    def rows_by_seq(self, seqs: Collection[int]) -> list[Row]: ...
    def row_states(self, after_seq: int, limit: int) -> list[State]: ...
    def anchor(self, watermark: int) -> tuple[int, str] | None: ...
    def anchor_holds(self, watermark: int, anchor_rev: int, anchor_id: str) -> bool: ...
    def can_save(self) -> bool: ...
