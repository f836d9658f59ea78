"""Anchors: the code each memory describes, and what verification last found of it."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from zero_memory.clock import from_text, to_text
from zero_memory.domain.anchors import Anchor, AnchorRecord, AnchorState, Origin
from zero_memory.store.queries.base import SqlBase
from zero_memory.store.rows import marks

ANCHOR_COLUMNS = (
    "memory_id, path, symbol, origin, state, repository, verified_commit, content_hash, verified_at, drift, "
    "observed_path, observed_symbol, observed_hash, created_at"
)


def anchors_sql(count: int) -> str:
    """The anchors of ``count`` memories (one parameter a memory id), in ``anchors_of``'s order."""
    return (
        f"SELECT {ANCHOR_COLUMNS} FROM memory_anchors WHERE memory_id IN ({marks(count)}) "
        "ORDER BY memory_id, path, symbol"
    )


def anchors_by_memory(rows: Sequence[Any]) -> dict[str, list[AnchorRecord]]:
    found: dict[str, list[AnchorRecord]] = {}
    for row in rows:
        found.setdefault(row["memory_id"], []).append(_record(row))
    return found


class AnchorQueries(SqlBase):
    def set_anchors(self, memory_id: str, anchors: Sequence[AnchorRecord], at: datetime) -> None:
        self._exec("DELETE FROM memory_anchors WHERE memory_id = ?", (memory_id,))
        for anchor in anchors:
            self._exec(
                f"INSERT INTO memory_anchors({ANCHOR_COLUMNS}) VALUES ({marks(14)}) "
                "ON CONFLICT (memory_id, path, symbol) DO NOTHING",
                (*_values(anchor, memory_id), to_text(at)),
            )

    def anchors_of(self, memory_ids: Collection[str]) -> dict[str, list[AnchorRecord]]:
        ids = list(dict.fromkeys(memory_ids))
        found: dict[str, list[AnchorRecord]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            found.update(anchors_by_memory(self._query(anchors_sql(len(chunk)), chunk)))
        return found

    def anchors_in(self, scopes: Collection[str]) -> list[AnchorRecord]:
        scopes = sorted(scopes)
        if not scopes:
            return []
        columns = ", ".join(f"a.{column}" for column in ANCHOR_COLUMNS.split(", "))
        rows = self._query(
            f"SELECT {columns} FROM memory_anchors a JOIN memories m ON m.id = a.memory_id "
            f"WHERE m.status = 'live' AND m.scope IN ({marks(len(scopes))}) ORDER BY a.memory_id, a.path, a.symbol",
            scopes,
        )
        return [_record(row) for row in rows]

    def drifted_in(self, scopes: Collection[str], *, limit: int) -> list[str]:
        scopes = sorted(scopes)
        if not scopes:
            return []
        rows = self._query(
            "SELECT DISTINCT a.memory_id FROM memory_anchors a JOIN memories m ON m.id = a.memory_id "
            f"WHERE a.state IN ('changed', 'gone') AND m.status = 'live' AND m.scope IN ({marks(len(scopes))}) "
            "ORDER BY a.memory_id LIMIT ?",
            [*scopes, limit],
        )
        return [row["memory_id"] for row in rows]

    def update_anchor(self, old: AnchorRecord, new: AnchorRecord) -> bool:
        values = _values(new, old.memory_id)
        return (
            self._exec(
                "UPDATE memory_anchors SET path = ?, symbol = ?, origin = ?, state = ?, repository = ?, "
                "verified_commit = ?, content_hash = ?, verified_at = ?, drift = ?, observed_path = ?, "
                "observed_symbol = ?, observed_hash = ? "
                "WHERE memory_id = ? AND path = ? AND symbol = ?",
                (*values[1:], old.memory_id, old.path, old.symbol or ""),
            )
            > 0
        )

    def update_outdated(self, dispute_id: str, reason: str) -> bool:
        return (
            self._exec(
                "UPDATE disputes SET reason = ? WHERE id = ? AND verdict = 'outdated' AND status = 'pending'",
                (reason, dispute_id),
            )
            > 0
        )


def _values(anchor: AnchorRecord, memory_id: str) -> tuple[Any, ...]:
    return (
        memory_id,
        anchor.path,
        anchor.symbol or "",
        anchor.origin.value,
        anchor.state.value,
        anchor.repository,
        anchor.commit,
        anchor.content_hash,
        to_text(anchor.verified_at) if anchor.verified_at else None,
        anchor.drift,
        anchor.observed.path if anchor.observed else None,
        (anchor.observed.symbol or "") if anchor.observed else None,
        anchor.observed_hash,
    )


def _record(row: Any) -> AnchorRecord:
    return AnchorRecord(
        memory_id=row["memory_id"],
        path=row["path"],
        symbol=row["symbol"] or None,
        origin=Origin(row["origin"]),
        state=AnchorState(row["state"]),
        repository=row["repository"],
        commit=row["verified_commit"],
        content_hash=row["content_hash"],
        verified_at=from_text(row["verified_at"]) if row["verified_at"] else None,
        drift=row["drift"],
        observed=Anchor(row["observed_path"], row["observed_symbol"] or None) if row["observed_path"] else None,
        observed_hash=row["observed_hash"],
    )
