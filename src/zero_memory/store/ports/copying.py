"""The store port's ``CopyTx``: one family of ``Tx`` (``store/base.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol


class CopyTx(Protocol):
    """Whole-table copies (``zm db copy``): ``table`` is one of ``tables.COPY_TABLES``, nothing else
    (``queries/copying.py``)."""

    def copy_rows(self, table: str, after: Sequence[Any] | None, limit: int) -> list[dict[str, Any]]:
        """Whole rows in key order after the key ``after``; ``embedding`` as a float32 array."""
        ...

    def insert_rows(self, table: str, rows: Sequence[dict[str, Any]]) -> None:
        """Insert rows as ``copy_rows`` gives them, keeping every value (ids, ``seq``, timestamps)."""
        ...

    def count_rows(self, table: str) -> int: ...
    def restart_sequences(self) -> None:
        """After ``insert_rows``, let generated ``seq`` values continue after the largest one."""
        ...
