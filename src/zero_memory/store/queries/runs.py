"""Hygiene runs, re-examination guards, portability candidacies, usage and surfacings."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from zero_memory.clock import to_text
from zero_memory.domain.records import Channel, PortabilityCandidate, Run, RunStatus
from zero_memory.store.queries.base import SqlBase
from zero_memory.store.rows import marks, portability_from_row, run_from_row


class RunQueries(SqlBase):
    # -- runs ----------------------------------------------------------------------------------

    def claim_run(self, run: Run) -> bool:
        """Insert a run unless one with its id exists; whoever inserts it owns it."""
        changed = self._exec(
            "INSERT INTO runs(id, owner, kind, status, dry_run, started_by, started_at, heartbeat_at, summary) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (
                run.id,
                run.owner,
                run.kind,
                run.status.value,
                int(run.dry_run),
                run.started_by,
                to_text(run.started_at),
                to_text(run.started_at),
                json.dumps(run.summary),
            ),
        )
        return changed > 0

    def touch_run(self, run_id: str, summary: dict[str, Any], at: datetime) -> None:
        self._exec(
            "UPDATE runs SET heartbeat_at = ?, summary = ? WHERE id = ? AND status = 'running'",
            (to_text(at), json.dumps(summary, sort_keys=True), run_id),
        )

    def interrupt_runs(self, *, heartbeat_before: datetime, at: datetime) -> list[str]:
        """Mark running runs whose process stopped beating as interrupted; return their ids."""
        rows = self._query(
            "SELECT id FROM runs WHERE status = 'running' AND heartbeat_at < ? ORDER BY id",
            (to_text(heartbeat_before),),
        )
        ids = [r["id"] for r in rows]
        for run_id in ids:
            self._exec(
                "UPDATE runs SET status = 'interrupted', finished_at = ? WHERE id = ? AND status = 'running'",
                (to_text(at), run_id),
            )
        return ids

    def finish_run(self, run_id: str, status: RunStatus, summary: dict[str, Any], at: datetime) -> None:
        self._exec(
            "UPDATE runs SET status = ?, summary = ?, finished_at = ? WHERE id = ?",
            (status.value, json.dumps(summary, sort_keys=True), to_text(at), run_id),
        )

    def get_run(self, run_id: str) -> Run | None:
        rows = self._query("SELECT * FROM runs WHERE id = ?", (run_id,))
        return run_from_row(rows[0]) if rows else None

    def list_runs(
        self,
        *,
        owner: str | None = None,
        limit: int = 50,
        kinds: Collection[str] | None = None,
        not_kinds: Collection[str] | None = None,
    ) -> list[Run]:
        where: list[str] = []
        params: list[Any] = []
        if owner is not None:
            where.append("owner = ?")
            params.append(owner)
        for values, test in ((kinds, "IN"), (not_kinds, "NOT IN")):
            if values:
                where.append(f"kind {test} ({marks(len(values))})")
                params += sorted(values)
            elif values is not None and test == "IN":
                where.append("1 = 0")  # no kind asked for: no run
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        rows = self._query(f"SELECT * FROM runs {clause} ORDER BY started_at DESC, id DESC LIMIT ?", [*params, limit])
        return [run_from_row(r) for r in rows]

    def runs_with_status(self, status: RunStatus) -> list[Run]:
        rows = self._query("SELECT * FROM runs WHERE status = ? ORDER BY started_at", (status.value,))
        return [run_from_row(r) for r in rows]

    # -- re-examination guards and portability candidacies ---------------------------------

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

    def add_portability(self, candidate: PortabilityCandidate) -> bool:
        """Record a candidacy; False when the memory was a candidate before (once ever)."""
        changed = self._exec(
            "INSERT INTO portability_candidates(id, memory_id, owner, status, confidence, rationale, model, "
            "original_scope, run_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (
                candidate.id,
                candidate.memory_id,
                candidate.owner,
                candidate.status,
                candidate.confidence,
                candidate.rationale,
                candidate.model,
                candidate.original_scope,
                candidate.run_id,
                to_text(candidate.created_at),
            ),
        )
        return changed > 0

    def get_portability(self, candidate_id: str) -> PortabilityCandidate | None:
        rows = self._query("SELECT * FROM portability_candidates WHERE id = ?", (candidate_id,))
        return portability_from_row(rows[0]) if rows else None

    def portability_of(self, memory_ids: Collection[str]) -> set[str]:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return set()
        rows = self._query(f"SELECT memory_id FROM portability_candidates WHERE memory_id IN ({marks(len(ids))})", ids)
        return {r["memory_id"] for r in rows}

    def list_portability(self, *, owner: str, status: str | None, limit: int = 100) -> list[PortabilityCandidate]:
        if status is None:
            rows = self._query(
                "SELECT * FROM portability_candidates WHERE owner = ? ORDER BY id LIMIT ?", (owner, limit)
            )
        else:
            rows = self._query(
                "SELECT * FROM portability_candidates WHERE owner = ? AND status = ? ORDER BY id LIMIT ?",
                (owner, status, limit),
            )
        return [portability_from_row(r) for r in rows]

    def settle_portability(self, candidate_id: str, status: str, by: str, at: datetime) -> bool:
        changed = self._exec(
            "UPDATE portability_candidates SET status = ?, resolved_by = ?, resolved_at = ? "
            "WHERE id = ? AND status = 'pending'",
            (status, by, to_text(at), candidate_id),
        )
        return changed > 0

    # -- usage -------------------------------------------------------------------------------------

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

    def add_surfacings(
        self, user_id: str, memory_ids: Sequence[str], at: datetime, *, session_id: str | None, channel: Channel
    ) -> None:
        for memory_id in memory_ids:
            self._exec(
                "INSERT INTO surfacings(at, memory_id, user_id, session_id, channel) VALUES (?, ?, ?, ?, ?)",
                (to_text(at), memory_id, user_id, session_id, str(channel)),
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

    # -- retention: per-day counts of old surfacings and usage events -----------------------------

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
