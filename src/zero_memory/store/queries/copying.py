"""Whole-table copies between stores (``zm db copy``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from zero_memory.store.queries.base import SqlBase
from zero_memory.store.rows import marks
from zero_memory.store.tables import MAX_INSERT_PARAMS, SEQUENCED_TABLES, copied_table


class CopyQueries(SqlBase):
    # -- whole-table copies (zm db copy) -------------------------------------------------------------

    def copy_rows(self, table: str, after: Sequence[Any] | None, limit: int) -> list[dict[str, Any]]:
        """Up to ``limit`` whole rows in key order, after the row whose key is ``after`` (None: from the start).

        Values come back as stored (ISO text, JSON text, 0/1), except ``embedding``:
        a float32 array (or None) whichever backend it came from.
        """
        spec = copied_table(table)
        key = ", ".join(spec.key)
        where, params = "", []
        if after is not None:
            where = f"WHERE ({key}) > ({marks(len(spec.key))})"
            params = list(after)
        rows = self._query(
            f"SELECT {', '.join(spec.columns)} FROM {spec.name} {where} ORDER BY {key} LIMIT ?", [*params, limit]
        )
        if "embedding" in spec.columns:
            for row in rows:
                if row["embedding"] is not None:
                    row["embedding"] = self._vector_from_value(row["embedding"])
        return rows

    def insert_rows(self, table: str, rows: Sequence[dict[str, Any]]) -> None:
        """Insert rows as ``copy_rows`` returned them, every column as given (``seq`` included)."""
        spec = copied_table(table)
        if not rows:
            return
        columns = ", ".join(spec.columns)
        one = f"({marks(len(spec.columns))})"
        per_statement = max(1, MAX_INSERT_PARAMS // len(spec.columns))
        for start in range(0, len(rows), per_statement):
            chunk = rows[start : start + per_statement]
            params: list[Any] = []
            for row in chunk:
                for column in spec.columns:
                    value = row[column]
                    if column == "embedding" and value is not None:
                        value = self._embedding_param(np.asarray(value, dtype=np.float32))
                    params.append(value)
            self._exec(f"INSERT INTO {spec.name}({columns}) VALUES {', '.join([one] * len(chunk))}", params)

    def count_rows(self, table: str) -> int:
        spec = copied_table(table)
        return int(self._query(f"SELECT count(*) AS n FROM {spec.name}")[0]["n"])

    def restart_sequences(self) -> None:
        """After rows came in with their own ``seq``, make the next generated one follow the largest.

        SQLite's INTEGER PRIMARY KEY does so by itself; a PostgreSQL identity
        column keeps its own counter, which inserted values do not move.
        """
        if getattr(getattr(self, "store", None), "backend", None) != "postgres":
            return
        for name in SEQUENCED_TABLES:
            self._query(
                f"SELECT setval(pg_get_serial_sequence('{name}', 'seq'), coalesce(max(seq), 0) + 1, false) FROM {name}"
            )
