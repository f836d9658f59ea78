"""The hooks each store adapter supplies to the shared queries."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import numpy as np

from zero_memory.store.fulltext import TextPlan
from zero_memory.store.ports.search import Neighbour
from zero_memory.store.rows import marks


class SqlBase:
    """The hooks an adapter supplies; every query mixin builds on them."""

    # -- hooks ---------------------------------------------------------------

    def _exec(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run a statement; return the number of rows it changed."""
        raise NotImplementedError

    def _exec_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement once for each row of parameters (an adapter may send them together)."""
        for params in rows:
            self._exec(sql, params)

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        raise NotImplementedError

    def _held(self, table: str, column: str, values: Collection[str], *, owner: str | None = None) -> set[str]:
        """Which of ``values`` some row of ``table`` holds in ``column`` (of ``owner``'s rows, if given), asked
        500 at a time."""
        ordered = sorted(set(values))
        mine = "owner = ? AND " if owner is not None else ""
        found: set[str] = set()
        for start in range(0, len(ordered), 500):
            chunk = ordered[start : start + 500]
            rows = self._query(
                f"SELECT DISTINCT {column} FROM {table} WHERE {mine}{column} IN ({marks(len(chunk))})",
                [owner, *chunk] if owner is not None else chunk,
            )
            found.update(r[column] for r in rows)
        return found

    def _embedding_param(self, vector: np.ndarray) -> Any:
        raise NotImplementedError

    def _vector_from_value(self, value: Any) -> np.ndarray:
        raise NotImplementedError

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
        raise NotImplementedError

    def _word_counts(self, words: list[str]) -> tuple[int, dict[str, int]]:
        """How many memories the store holds, and how many of them hold each word (any status, any scope)."""
        raise NotImplementedError

    def text_candidates(self, plan: TextPlan, *, scopes: Collection[str], limit: int) -> list[str]:
        raise NotImplementedError

    def similar_many(
        self, vectors: np.ndarray, *, floor: float, limit: int, owner: str, excludes: list[Collection[str]]
    ) -> list[list[Neighbour]]:
        """Neighbours of several vectors; adapters with a faster batched search override it."""
        return [
            self.similar(vector, floor=floor, limit=limit, owner=owner, exclude=exclude)
            for vector, exclude in zip(vectors, excludes, strict=True)
        ]
