"""Links between memories and the append-only audit log."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from zero_memory.clock import from_text, to_text
from zero_memory.domain.records import (
    AuditEntry,
    Link,
)
from zero_memory.store.queries.base import SqlBase
from zero_memory.store.rows import audit_from_row, cap_payload, link_from_row, marks
from zero_memory.store.tables import MAX_INSERT_PARAMS


class HistoryQueries(SqlBase):
    # -- links --------------------------------------------------------------------

    def add_link(self, link: Link) -> None:
        self._exec(
            "INSERT INTO links(id, src, dst, type, created_at, created_by, run_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (link.id, link.src, link.dst, link.type, to_text(link.created_at), link.created_by, link.run_id),
        )

    def links_of(self, memory_id: str) -> list[Link]:
        rows = self._query(
            "SELECT * FROM links WHERE (src = ? OR dst = ?) AND removed_at IS NULL ORDER BY created_at, id",
            (memory_id, memory_id),
        )
        return [link_from_row(r) for r in rows]

    def has_link(self, a: str, b: str, link_type: str) -> bool:
        rows = self._query(
            "SELECT 1 AS x FROM links WHERE type = ? AND removed_at IS NULL AND "
            "((src = ? AND dst = ?) OR (src = ? AND dst = ?)) LIMIT 1",
            (link_type, a, b, b, a),
        )
        return bool(rows)

    def remove_links(self, *, dst: str, link_type: str, at: datetime) -> list[Link]:
        rows = self._query("SELECT * FROM links WHERE dst = ? AND type = ? AND removed_at IS NULL", (dst, link_type))
        if rows:
            self._exec(
                "UPDATE links SET removed_at = ? WHERE dst = ? AND type = ? AND removed_at IS NULL",
                (to_text(at), dst, link_type),
            )
        return [link_from_row(r) for r in rows]

    def links_of_run(self, run_id: str) -> list[Link]:
        rows = self._query(
            "SELECT * FROM links WHERE run_id = ? AND removed_at IS NULL ORDER BY created_at, id", (run_id,)
        )
        return [link_from_row(r) for r in rows]

    def remove_link(self, link_id: str, at: datetime) -> None:
        self._exec("UPDATE links SET removed_at = ? WHERE id = ? AND removed_at IS NULL", (to_text(at), link_id))

    # -- audit ----------------------------------------------------------------------

    def add_audit(
        self,
        *,
        actor: str,
        action: str,
        owner: str | None,
        memory_ids: Sequence[str],
        payload: dict[str, Any],
        run_id: str | None,
        at: datetime,
    ) -> int:
        rows = self._query(
            "INSERT INTO audit(at, actor, action, owner, memory_ids, payload, run_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING seq",
            (
                to_text(at),
                actor,
                action,
                owner,
                json.dumps(list(memory_ids)),
                json.dumps(cap_payload(payload), sort_keys=True),
                run_id,
            ),
        )
        seq = int(rows[0]["seq"])
        for memory_id in dict.fromkeys(memory_ids):
            self._exec("INSERT INTO audit_memories(audit_seq, memory_id) VALUES (?, ?)", (seq, memory_id))
        return seq

    def add_memory_audits(
        self,
        *,
        actor: str,
        action: str,
        owner: str | None,
        payloads: Sequence[tuple[str, dict[str, Any]]],
        run_id: str | None,
        at: datetime,
    ) -> None:
        """One audit row per memory, as ``add_audit`` writes it for ``[memory_id]``, several rows a statement
        (a bulk import's batch). The memory ids must differ: each returned row is matched to its memory by
        the ids it holds, whatever order the database returns them in."""
        when = to_text(at)
        per_statement = max(1, MAX_INSERT_PARAMS // 7)
        for start in range(0, len(payloads), per_statement):
            chunk = payloads[start : start + per_statement]
            params: list[Any] = []
            for memory_id, payload in chunk:
                ids = json.dumps([memory_id])
                params += [when, actor, action, owner, ids, json.dumps(cap_payload(payload), sort_keys=True), run_id]
            rows = self._query(
                "INSERT INTO audit(at, actor, action, owner, memory_ids, payload, run_id) "
                f"VALUES {', '.join(['(?, ?, ?, ?, ?, ?, ?)'] * len(chunk))} RETURNING seq, memory_ids",
                params,
            )
            links = [value for r in rows for value in (int(r["seq"]), json.loads(r["memory_ids"])[0])]
            self._exec(
                f"INSERT INTO audit_memories(audit_seq, memory_id) VALUES {', '.join(['(?, ?)'] * len(rows))}", links
            )

    def audit_for_memory(
        self,
        memory_id: str,
        *,
        limit: int = 200,
        before: int | None = None,
        actions: Collection[str] | None = None,
    ) -> list[AuditEntry]:
        where: list[str] = ["m.memory_id = ?"]
        params: list[Any] = [memory_id]
        if before is not None:
            where.append("m.audit_seq < ?")
            params.append(before)
        if actions is not None:
            chosen = sorted(set(actions))
            if not chosen:
                return []
            where.append(f"a.action IN ({marks(len(chosen))})")
            params += chosen
        rows = self._query(
            "SELECT a.* FROM audit a JOIN audit_memories m ON m.audit_seq = a.seq "
            f"WHERE {' AND '.join(where)} ORDER BY m.audit_seq DESC LIMIT ?",
            [*params, limit],
        )
        return [audit_from_row(r) for r in rows]

    def audit_for_run(self, run_id: str) -> list[AuditEntry]:
        rows = self._query("SELECT * FROM audit WHERE run_id = ? ORDER BY seq", (run_id,))
        return [audit_from_row(r) for r in rows]

    def audit_actions(self, action: str, *, since: datetime | None = None) -> list[AuditEntry]:
        rows = self._query(
            "SELECT * FROM audit WHERE action = ? AND at >= ? ORDER BY seq",
            (action, to_text(since) if since else ""),
        )
        return [audit_from_row(r) for r in rows]

    def last_action_at(self, memory_ids: Sequence[str], action: str) -> dict[str, datetime]:
        """When ``action`` was last audited for each memory that has it (e.g. its latest re-affirmation)."""
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return {}
        rows = self._query(
            "SELECT m.memory_id AS memory_id, max(a.at) AS at FROM audit_memories m "
            "JOIN audit a ON a.seq = m.audit_seq "
            f"WHERE m.memory_id IN ({marks(len(ids))}) AND a.action = ? GROUP BY m.memory_id",
            (*ids, action),
        )
        return {r["memory_id"]: from_text(r["at"]) for r in rows}
