"""Re-examination guards: a memory a model re-examined is not asked about again with that model."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from zero_memory.clock import to_text
from zero_memory.store.queries.base import SqlBase
from zero_memory.store.rows import marks


class GuardQueries(SqlBase):
    def guarded(self, memory_ids: Collection[str], model: str) -> set[str]:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return set()
        rows = self._query(
            f"SELECT memory_id FROM rescan_guards WHERE model = ? AND memory_id IN ({marks(len(ids))})", [model, *ids]
        )
        return {r["memory_id"] for r in rows}

    def add_guard(self, memory_id: str, model: str, outcome: str, at: datetime) -> None:
        self._exec(
            "INSERT INTO rescan_guards(memory_id, model, created_at, outcome) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (memory_id, model) DO NOTHING",
            (memory_id, model, to_text(at), outcome),
        )
