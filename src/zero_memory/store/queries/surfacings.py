"""Surfacings: which memories reached whom, in which session and on which channel; old ones become
per-day counts (retention)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from zero_memory.clock import to_text
from zero_memory.domain.records import Channel
from zero_memory.store.queries.base import SqlBase
from zero_memory.store.rows import marks


class SurfacingQueries(SqlBase):
    def add_surfacings(
        self, user_id: str, memory_ids: Sequence[str], at: datetime, *, session_id: str | None, channel: Channel
    ) -> None:
        when, channel_name = to_text(at), str(channel)
        self._exec_many(
            "INSERT INTO surfacings(at, memory_id, user_id, session_id, channel) VALUES (?, ?, ?, ?, ?)",
            [(when, memory_id, user_id, session_id, channel_name) for memory_id in memory_ids],
        )

    def surfacing_counts(self, *, since: datetime, min_count: int) -> list[tuple[str, int]]:
        rows = self._query(
            "SELECT memory_id, count(*) AS n FROM surfacings WHERE at >= ? GROUP BY memory_id "
            "HAVING count(*) >= ? ORDER BY count(*) DESC, memory_id",
            (to_text(since), min_count),
        )
        return [(r["memory_id"], int(r["n"])) for r in rows]

    def surfacings_of(self, memory_ids: Collection[str], *, since: datetime) -> dict[str, int]:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return {}
        rows = self._query(
            f"SELECT memory_id, count(*) AS n FROM surfacings WHERE at >= ? AND memory_id IN ({marks(len(ids))}) "
            "GROUP BY memory_id",
            [to_text(since), *ids],
        )
        return {r["memory_id"]: int(r["n"]) for r in rows}

    def sessions_served(self, memory_ids: Collection[str], *, since: datetime, channel: Channel) -> dict[str, int]:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return {}
        rows = self._query(
            "SELECT memory_id, count(DISTINCT session_id) AS n FROM surfacings "
            f"WHERE channel = ? AND at >= ? AND session_id IS NOT NULL AND memory_id IN ({marks(len(ids))}) "
            "GROUP BY memory_id",
            [str(channel), to_text(since), *ids],
        )
        return {r["memory_id"]: int(r["n"]) for r in rows}

    def rollup_surfacings(self, *, before: datetime) -> int:
        """Fold surfacings older than ``before`` into ``surfacing_days``, then remove them; rows removed."""
        cutoff = to_text(before)
        self._exec(
            "INSERT INTO surfacing_days(day, memory_id, user_id, channel, count) "
            "SELECT substr(at, 1, 10), memory_id, user_id, channel, count(*) FROM surfacings WHERE at < ? "
            "GROUP BY substr(at, 1, 10), memory_id, user_id, channel "
            "ON CONFLICT (day, memory_id, user_id, channel) "
            "DO UPDATE SET count = surfacing_days.count + excluded.count",
            (cutoff,),
        )
        return self._exec("DELETE FROM surfacings WHERE at < ?", (cutoff,))

    def surfacings_by_day(self, *, since: datetime, user_id: str | None = None) -> list[dict[str, Any]]:
        """Surfacings per day and channel since ``since``, kept ones and rolled-up ones alike."""
        where, params = ["day >= ?"], [to_text(since)[:10]]
        if user_id is not None:
            where.append("user_id = ?")
            params.append(user_id)
        return self._query(
            "SELECT day, user_id, channel, sum(n) AS count FROM ("
            "SELECT substr(at, 1, 10) AS day, user_id, channel, 1 AS n FROM surfacings UNION ALL "
            "SELECT day, user_id, channel, count AS n FROM surfacing_days"
            f") AS served WHERE {' AND '.join(where)} GROUP BY day, user_id, channel ORDER BY day, user_id, channel",
            params,
        )
