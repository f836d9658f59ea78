"""The review queue and the judgement cache."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from zero_memory.clock import to_text
from zero_memory.domain.records import (
    Dispute,
    DisputeStatus,
    Judgement,
)
from zero_memory.store.ports.review import DisputeQuery
from zero_memory.store.queries.base import SqlBase
from zero_memory.store.rows import dispute_from_row, marks


def open_disputes_sql(count: int) -> str:
    """The pending disputes about any of ``count`` memories (their ids twice: one side, then the other)."""
    ph = marks(count)
    return f"SELECT * FROM disputes WHERE status = 'pending' AND (memory_a IN ({ph}) OR memory_b IN ({ph}))"


def disputes_of(rows: Sequence[Any]) -> list[Dispute]:
    """The disputes of ``rows``, each once, in id order."""
    found = {row["id"]: dispute_from_row(row) for row in rows}
    return sorted(found.values(), key=lambda d: d.id)


class ReviewQueries(SqlBase):
    # -- review queue -----------------------------------------------------------------

    def add_dispute(self, dispute: Dispute) -> bool:
        changed = self._exec(
            "INSERT INTO disputes(id, owner, shape, verdict, direction, confidence, rationale, model, origin, "
            "status, memory_a, memory_b, pair_key, reason, run_id, created_at, resolved_at, resolved_by, resolution, "
            f"proposal) VALUES ({marks(20)}) ON CONFLICT DO NOTHING",
            (
                dispute.id,
                dispute.owner,
                dispute.shape.value,
                dispute.verdict,
                dispute.direction,
                dispute.confidence,
                dispute.rationale,
                dispute.model,
                dispute.origin,
                dispute.status.value,
                dispute.memory_a,
                dispute.memory_b,
                dispute.pair_key,
                dispute.reason,
                dispute.run_id,
                to_text(dispute.created_at),
                to_text(dispute.resolved_at) if dispute.resolved_at else None,
                dispute.resolved_by,
                json.dumps(dispute.resolution) if dispute.resolution else None,
                json.dumps(dispute.proposal, sort_keys=True) if dispute.proposal else None,
            ),
        )
        return changed > 0

    def get_dispute(self, dispute_id: str) -> Dispute | None:
        rows = self._query("SELECT * FROM disputes WHERE id = ?", (dispute_id,))
        return dispute_from_row(rows[0]) if rows else None

    def dispute_for_pair(self, pair_key: str) -> Dispute | None:
        rows = self._query("SELECT * FROM disputes WHERE pair_key = ?", (pair_key,))
        return dispute_from_row(rows[0]) if rows else None

    def _dispute_where(self, query: DisputeQuery) -> tuple[str, list[Any]]:
        where, params = ["1 = 1"], []
        if query.owner is not None:
            where.append("owner = ?")
            params.append(query.owner)
        if query.status is not None:
            where.append("status = ?")
            params.append(query.status.value)
        if query.verdict is not None:
            where.append("verdict = ?")
            params.append(query.verdict)
        if query.shape is not None:
            where.append("shape = ?")
            params.append(query.shape)
        if query.origin is not None:
            where.append("origin = ?")
            params.append(query.origin)
        if query.scopes is not None:
            scopes = sorted(query.scopes)
            if not scopes:
                return "1 = 0", []
            ph = marks(len(scopes))
            # Both sides must be readable: a row about a memory you cannot see is not yours to see.
            where.append(
                f"memory_a IN (SELECT id FROM memories WHERE scope IN ({ph})) AND "
                f"(memory_b IS NULL OR memory_b IN (SELECT id FROM memories WHERE scope IN ({ph})))"
            )
            params += scopes + scopes
        return " AND ".join(where), params

    def list_disputes(self, query: DisputeQuery) -> list[Dispute]:
        where, params = self._dispute_where(query)
        if query.after is not None:
            where += " AND id > ?"
            params.append(query.after)
        rows = self._query(f"SELECT * FROM disputes WHERE {where} ORDER BY id LIMIT ?", [*params, query.limit])
        return [dispute_from_row(r) for r in rows]

    def count_disputes(self, query: DisputeQuery) -> int:
        where, params = self._dispute_where(query)
        return int(self._query(f"SELECT count(*) AS n FROM disputes WHERE {where}", params)[0]["n"])

    def open_disputes_for(self, memory_ids: Collection[str]) -> list[Dispute]:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return []
        rows: list[dict[str, Any]] = []
        for start in range(0, len(ids), 400):
            chunk = ids[start : start + 400]
            rows += self._query(open_disputes_sql(len(chunk)), [*chunk, *chunk])
        return disputes_of(rows)

    def settle_dispute(
        self, dispute_id: str, status: DisputeStatus, resolution: dict[str, Any], by: str, at: datetime
    ) -> bool:
        changed = self._exec(
            "UPDATE disputes SET status = ?, resolution = ?, resolved_by = ?, resolved_at = ? "
            "WHERE id = ? AND status = 'pending'",
            (status.value, json.dumps(resolution), by, to_text(at), dispute_id),
        )
        return changed > 0

    def escalate_dispute(self, dispute_id: str, from_verdict: str, to_verdict: str, run_id: str | None) -> bool:
        changed = self._exec(
            "UPDATE disputes SET verdict = ?, run_id = ? WHERE id = ? AND status = 'pending' AND verdict = ?",
            (to_verdict, run_id, dispute_id, from_verdict),
        )
        return changed > 0

    # -- judgement cache -------------------------------------------------------------------

    def get_judgement(self, pair_key: str, model: str) -> Judgement | None:
        rows = self._query("SELECT * FROM judgements WHERE pair_key = ? AND model = ?", (pair_key, model))
        if not rows:
            return None
        r = rows[0]
        return Judgement(r["verdict"], float(r["confidence"]), r["rationale"], r["model"])

    def judgements_of(self, pair_key: str) -> list[Judgement]:
        """Every model's cached judgement of a pair, by model name."""
        rows = self._query("SELECT * FROM judgements WHERE pair_key = ? ORDER BY model", (pair_key,))
        return [Judgement(r["verdict"], float(r["confidence"]), r["rationale"], r["model"]) for r in rows]

    def put_judgement(self, pair_key: str, judgement: Judgement, at: datetime) -> None:
        self._exec(
            "INSERT INTO judgements(pair_key, model, verdict, confidence, rationale, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (pair_key, model) DO UPDATE SET verdict = excluded.verdict, "
            "confidence = excluded.confidence, rationale = excluded.rationale, created_at = excluded.created_at",
            (pair_key, judgement.model, judgement.verdict, judgement.confidence, judgement.rationale, to_text(at)),
        )
