"""The model-usage ledger and the tools' usage events; old events become per-day counts (retention)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from zero_memory.clock import to_text
from zero_memory.store.queries.base import SqlBase


class UsageQueries(SqlBase):
    def add_ledger(
        self,
        *,
        owner: str,
        model: str,
        purpose: str,
        input_tokens: int,
        output_tokens: int,
        latency_ms: int,
        outcome: str,
        run_id: str | None,
        at: datetime,
    ) -> None:
        self._exec(
            "INSERT INTO usage_ledger(at, owner, model, purpose, input_tokens, output_tokens, latency_ms, outcome, "
            "run_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (to_text(at), owner, model, purpose, input_tokens, output_tokens, latency_ms, outcome, run_id),
        )

    def ledger(self, *, owner: str | None = None, run_id: str | None = None) -> list[dict[str, Any]]:
        where, params = ["1 = 1"], []
        if owner is not None:
            where.append("owner = ?")
            params.append(owner)
        if run_id is not None:
            where.append("run_id = ?")
            params.append(run_id)
        return self._query(f"SELECT * FROM usage_ledger WHERE {' AND '.join(where)} ORDER BY seq", params)

    def add_usage_event(
        self, *, user_id: str, tool: str, client: str, outcome: str, declared_supersede: bool, at: datetime
    ) -> None:
        self._exec(
            "INSERT INTO usage_events(at, user_id, tool, client, outcome, declared_supersede) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (to_text(at), user_id, tool, client, outcome, int(declared_supersede)),
        )

    def usage_events(self, *, tool: str | None = None, since: datetime | None = None) -> list[dict[str, Any]]:
        where, params = ["at >= ?"], [to_text(since) if since else ""]
        if tool is not None:
            where.append("tool = ?")
            params.append(tool)
        return self._query(f"SELECT * FROM usage_events WHERE {' AND '.join(where)} ORDER BY seq", params)

    def rollup_usage_events(self, *, before: datetime) -> int:
        """Fold usage events older than ``before`` into ``usage_event_days``, then remove them; rows removed."""
        cutoff = to_text(before)
        self._exec(
            "INSERT INTO usage_event_days(day, user_id, tool, client, outcome, declared_supersede, count) "
            "SELECT substr(at, 1, 10), user_id, tool, client, outcome, declared_supersede, count(*) "
            "FROM usage_events WHERE at < ? "
            "GROUP BY substr(at, 1, 10), user_id, tool, client, outcome, declared_supersede "
            "ON CONFLICT (day, user_id, tool, client, outcome, declared_supersede) "
            "DO UPDATE SET count = usage_event_days.count + excluded.count",
            (cutoff,),
        )
        return self._exec("DELETE FROM usage_events WHERE at < ?", (cutoff,))

    def usage_by_day(
        self, *, since: datetime, tool: str | None = None, user_id: str | None = None
    ) -> list[dict[str, Any]]:
        """Usage events per day since ``since``, kept ones and rolled-up ones alike.

        Rows: day, user_id, tool, client, outcome, declared_supersede, count; in day order.
        """
        where, params = ["day >= ?"], [to_text(since)[:10]]
        if tool is not None:
            where.append("tool = ?")
            params.append(tool)
        if user_id is not None:
            where.append("user_id = ?")
            params.append(user_id)
        keys = "day, user_id, tool, client, outcome, declared_supersede"
        return self._query(
            f"SELECT {keys}, sum(n) AS count FROM ("
            f"SELECT substr(at, 1, 10) AS day, user_id, tool, client, outcome, declared_supersede, 1 AS n "
            "FROM usage_events UNION ALL "
            f"SELECT {keys}, count AS n FROM usage_event_days"
            f") AS usage WHERE {' AND '.join(where)} GROUP BY {keys} ORDER BY {keys}",
            params,
        )
