"""The capture stream's tables: staged transcript chunks and each owner's daily token allowance."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from zero_memory.clock import from_text, to_text
from zero_memory.domain.records import CaptureChunk, ChunkStatus
from zero_memory.store.queries.base import SqlBase

# The columns ``update_chunk`` may set, and how each value is stored.
_UPDATABLE: dict[str, Callable[[Any], Any]] = {
    "status": lambda v: ChunkStatus(v).value,
    "transcript": lambda v: v,
    "attempts": int,
    "next_attempt_at": to_text,
    "lease_until": lambda v: None if v is None else to_text(v),
    "last_error": lambda v: v,
    "statements": int,
    "created": int,
    "yielded": int,
    "absorbed": int,
    "refused": int,
    "input_tokens": int,
    "output_tokens": int,
    "finished_at": lambda v: None if v is None else to_text(v),
}


def chunk_from_row(row: dict[str, Any]) -> CaptureChunk:
    def moment(name: str) -> datetime | None:
        value = row[name]
        return from_text(value) if value else None

    return CaptureChunk(
        id=row["id"],
        owner=row["owner"],
        chunk_hash=row["chunk_hash"],
        conversation_id=row["conversation_id"],
        client=row["client"],
        scope=row["scope"],
        transcript=row["transcript"],
        chars=int(row["chars"]),
        status=ChunkStatus(row["status"]),
        next_attempt_at=from_text(row["next_attempt_at"]),
        created_at=from_text(row["created_at"]),
        updated_at=from_text(row["updated_at"]),
        attempts=int(row["attempts"]),
        lease_until=moment("lease_until"),
        last_error=row["last_error"],
        statements=int(row["statements"]),
        created=int(row["created"]),
        yielded=int(row["yielded"]),
        absorbed=int(row["absorbed"]),
        refused=int(row["refused"]),
        input_tokens=int(row["input_tokens"]),
        output_tokens=int(row["output_tokens"]),
        finished_at=moment("finished_at"),
    )


class CaptureQueries(SqlBase):
    def add_chunk(self, chunk: CaptureChunk) -> bool:
        changed = self._exec(
            "INSERT INTO capture_chunks(id, owner, chunk_hash, conversation_id, client, scope, transcript, chars, "
            "status, attempts, next_attempt_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT DO NOTHING",
            (
                chunk.id,
                chunk.owner,
                chunk.chunk_hash,
                chunk.conversation_id,
                chunk.client,
                chunk.scope,
                chunk.transcript,
                chunk.chars,
                chunk.status.value,
                chunk.attempts,
                to_text(chunk.next_attempt_at),
                to_text(chunk.created_at),
                to_text(chunk.updated_at),
            ),
        )
        return changed > 0

    def get_chunk(self, chunk_id: str) -> CaptureChunk | None:
        rows = self._query("SELECT * FROM capture_chunks WHERE id = ?", (chunk_id,))
        return chunk_from_row(rows[0]) if rows else None

    def chunk_by_hash(self, owner: str, chunk_hash: str) -> CaptureChunk | None:
        rows = self._query("SELECT * FROM capture_chunks WHERE owner = ? AND chunk_hash = ?", (owner, chunk_hash))
        return chunk_from_row(rows[0]) if rows else None

    def rearm_chunk(self, chunk_id: str, transcript: str, scope: str, at: datetime) -> bool:
        changed = self._exec(
            "UPDATE capture_chunks SET status = 'pending', transcript = ?, scope = ?, attempts = 0, "
            "next_attempt_at = ?, lease_until = NULL, last_error = NULL, finished_at = NULL, updated_at = ? "
            "WHERE id = ? AND status = 'failed'",
            (transcript, scope, to_text(at), to_text(at), chunk_id),
        )
        return changed > 0

    def claim_chunk(self, chunk_id: str, *, at: datetime, lease_until: datetime) -> CaptureChunk | None:
        now = to_text(at)
        changed = self._exec(
            "UPDATE capture_chunks SET status = 'extracting', lease_until = ?, updated_at = ? WHERE id = ? AND "
            "((status = 'pending' AND next_attempt_at <= ?) OR (status = 'extracting' AND lease_until < ?))",
            (to_text(lease_until), now, chunk_id, now, now),
        )
        return self.get_chunk(chunk_id) if changed else None

    def due_chunks(self, *, at: datetime, owner: str | None = None, limit: int = 50) -> list[str]:
        now = to_text(at)
        sql = (
            "SELECT id FROM capture_chunks WHERE ((status = 'pending' AND next_attempt_at <= ?) "
            "OR (status = 'extracting' AND lease_until < ?))"
        )
        params: list[Any] = [now, now]
        if owner is not None:
            sql += " AND owner = ?"
            params.append(owner)
        rows = self._query(sql + " ORDER BY next_attempt_at, id LIMIT ?", [*params, limit])
        return [r["id"] for r in rows]

    def count_waiting_chunks(self, owner: str) -> int:
        rows = self._query(
            "SELECT count(*) AS n FROM capture_chunks WHERE owner = ? AND status IN ('pending', 'extracting')",
            (owner,),
        )
        return int(rows[0]["n"])

    def owners_put_off(self, *, at: datetime, reason: str, owner: str | None = None) -> list[str]:
        sql = (
            "SELECT DISTINCT owner FROM capture_chunks WHERE status = 'pending' AND next_attempt_at > ? "
            f"AND substr(last_error, 1, {len(reason):d}) = ?"
        )
        params: list[Any] = [to_text(at), reason]
        if owner is not None:
            sql += " AND owner = ?"
            params.append(owner)
        return [r["owner"] for r in self._query(sql + " ORDER BY owner", params)]

    def bring_forward(self, owner: str, *, at: datetime, reason: str) -> int:
        now = to_text(at)
        return self._exec(
            "UPDATE capture_chunks SET next_attempt_at = ?, updated_at = ? WHERE owner = ? AND status = 'pending' "
            f"AND next_attempt_at > ? AND substr(last_error, 1, {len(reason):d}) = ?",
            (now, now, owner, now, reason),
        )

    def update_chunk(self, chunk_id: str, at: datetime, **fields: Any) -> None:
        unknown = set(fields) - set(_UPDATABLE)
        if unknown:
            raise ValueError(f"update_chunk: not a column it sets: {sorted(unknown)}")
        names = sorted(fields)
        assignments = ", ".join(f"{name} = ?" for name in [*names, "updated_at"])
        values = [_UPDATABLE[name](fields[name]) for name in names]
        self._exec(f"UPDATE capture_chunks SET {assignments} WHERE id = ?", [*values, to_text(at), chunk_id])

    def list_chunks(
        self, *, owner: str, since: datetime | None = None, status: ChunkStatus | None = None, limit: int = 100
    ) -> list[CaptureChunk]:
        sql = "SELECT * FROM capture_chunks WHERE owner = ?"
        params: list[Any] = [owner]
        if since is not None:
            sql += " AND created_at >= ?"
            params.append(to_text(since))
        if status is not None:
            sql += " AND status = ?"
            params.append(status.value)
        rows = self._query(sql + " ORDER BY created_at DESC, id DESC LIMIT ?", [*params, limit])
        return [chunk_from_row(r) for r in rows]

    def get_capture_budget(self, user_id: str) -> int | None:
        rows = self._query("SELECT daily_tokens FROM capture_budgets WHERE user_id = ?", (user_id,))
        return int(rows[0]["daily_tokens"]) if rows else None

    def set_capture_budget(self, user_id: str, daily_tokens: int, at: datetime) -> None:
        self._exec(
            "INSERT INTO capture_budgets(user_id, daily_tokens, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT (user_id) DO UPDATE SET daily_tokens = excluded.daily_tokens, "
            "updated_at = excluded.updated_at",
            (user_id, daily_tokens, to_text(at)),
        )

    def clear_capture_budget(self, user_id: str) -> bool:
        return self._exec("DELETE FROM capture_budgets WHERE user_id = ?", (user_id,)) > 0

    def ledger_tokens(self, *, owner: str, purpose: str, since: datetime) -> int:
        rows = self._query(
            "SELECT coalesce(sum(input_tokens + output_tokens), 0) AS n FROM usage_ledger "
            "WHERE owner = ? AND purpose = ? AND at >= ?",
            (owner, purpose, to_text(since)),
        )
        return int(rows[0]["n"])
