"""Portability candidacies: a personal memory proposed for a project scope, once ever."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from zero_memory.clock import to_text
from zero_memory.domain.records import PortabilityCandidate
from zero_memory.store.queries.base import SqlBase
from zero_memory.store.rows import marks, portability_from_row


class PortabilityQueries(SqlBase):
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
