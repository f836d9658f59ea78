"""Runs of the automatic passes: claimed once, kept alive by a heartbeat, finished or interrupted."""

from __future__ import annotations

import json
from collections.abc import Collection
from datetime import datetime
from typing import Any

from zero_memory.clock import to_text
from zero_memory.domain.records import Run, RunStatus
from zero_memory.store.queries.base import SqlBase
from zero_memory.store.rows import marks, run_from_row


class RunQueries(SqlBase):
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
