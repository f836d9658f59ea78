"""Memories: rows, lookups, lifecycle changes, vectors and listings."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from zero_memory.clock import to_text
from zero_memory.domain.memory import Brief, InvalidationReason, Memory, Status
from zero_memory.store.ports.reader import SYSTEM, Reader
from zero_memory.store.queries.base import SqlBase
from zero_memory.store.rows import BRIEF_COLUMNS, MEMORY_COLUMNS, brief_from_row, marks, memory_from_row
from zero_memory.store.tables import MAX_INSERT_PARAMS

INSERTED_COLUMNS = len(MEMORY_COLUMNS.split(", ")) + 3  # the embedding, its model and dimension
PREFIXED_COLUMNS = ", ".join(f"m.{column}" for column in MEMORY_COLUMNS.split(", "))


class MemoryQueries(SqlBase):
    # -- memories ---------------------------------------------------------------

    def insert_memory(self, memory: Memory, vector: np.ndarray, model: str) -> None:
        self.insert_memories([(memory, vector)], model)

    def insert_memories(self, memories: Sequence[tuple[Memory, np.ndarray]], model: str) -> None:
        """Insert new memories with their vectors, several rows a statement (a bulk import's batch)."""
        per_statement = max(1, MAX_INSERT_PARAMS // INSERTED_COLUMNS)
        one = f"({marks(INSERTED_COLUMNS)})"
        for start in range(0, len(memories), per_statement):
            chunk = memories[start : start + per_statement]
            params = [value for memory, vector in chunk for value in self._memory_values(memory, vector, model)]
            self._exec(
                f"INSERT INTO memories({MEMORY_COLUMNS}, embedding, embedding_model, embedding_dim) "
                f"VALUES {', '.join([one] * len(chunk))}",
                params,
            )

    def _memory_values(self, memory: Memory, vector: np.ndarray, model: str) -> tuple[Any, ...]:
        """A new memory's row, in the order of ``MEMORY_COLUMNS``, then its vector, model and dimension."""
        session_key = ",".join(sorted(memory.session_keys)) or None
        return (
            memory.id,
            memory.owner,
            memory.scope,
            memory.kind.value,
            memory.content,
            memory.content_hash,
            memory.author_kind.value,
            memory.agent_name,
            int(memory.rank),
            json.dumps(memory.source, sort_keys=True),
            to_text(memory.created_at),
            to_text(memory.updated_at),
            memory.status.value,
            memory.superseded_by,
            memory.invalidated_reason.value if memory.invalidated_reason else None,
            memory.original_scope,
            session_key,
            to_text(memory.restored_at) if memory.restored_at else None,
            self._embedding_param(vector),
            model,
            int(vector.shape[0]),
        )

    def get_memory(self, memory_id: str, reader: Reader) -> Memory | None:
        found = self.get_memories([memory_id], reader)
        return found.get(memory_id)

    def get_memories(self, ids: Collection[str], reader: Reader) -> dict[str, Memory]:
        """Memories by id that the reader may see; others are absent, exactly like missing ids.

        Visibility is applied to the rows fetched by id (a scope condition in SQL
        would lead the planner onto the scope index and scan a whole scope).
        """
        ids = list(dict.fromkeys(ids))
        found: dict[str, Memory] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            rows = self._query(f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id IN ({marks(len(chunk))})", chunk)
            for row in rows:
                if reader is SYSTEM or row["scope"] in reader.readable:  # type: ignore[union-attr]
                    found[row["id"]] = memory_from_row(row)
        return found

    def briefs_with_vectors(self, ids: Collection[str], reader: Reader) -> dict[str, tuple[Brief, np.ndarray | None]]:
        """The briefs of the memories by id that the reader may see, each with its vector (None if it has
        none), in one statement."""
        ids = list(dict.fromkeys(ids))
        found: dict[str, tuple[Brief, np.ndarray | None]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            for row in self._brief_rows_with_vectors(chunk):
                if (read := self._readable_brief(row, reader)) is not None:
                    found[row["id"]] = read
        return found

    def _readable_brief(self, row: dict[str, Any], reader: Reader) -> tuple[Brief, np.ndarray | None] | None:
        """A row of ``BRIEF_COLUMNS`` and ``embedding`` as a brief and its vector (None if it has none), or
        None when the reader may not see it."""
        if reader is not SYSTEM and row["scope"] not in reader.readable:  # type: ignore[union-attr]
            return None
        vector = row["embedding"]
        return brief_from_row(row), None if vector is None else self._vector_from_value(vector)

    def _brief_rows_with_vectors(self, ids: list[str]) -> Sequence[Any]:
        return self._query(f"SELECT {BRIEF_COLUMNS}, embedding FROM memories WHERE id IN ({marks(len(ids))})", ids)

    def find_live_by_hash(self, owner: str, scope: str, content_hash: str) -> Memory | None:
        rows = self._query(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE owner = ? AND content_hash = ? AND scope = ? "
            "AND status = 'live' ORDER BY created_at LIMIT 1",
            (owner, content_hash, scope),
        )
        return memory_from_row(rows[0]) if rows else None

    def find_by_hash(self, owner: str, content_hash: str) -> list[Memory]:
        rows = self._query(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE owner = ? AND content_hash = ? ORDER BY created_at",
            (owner, content_hash),
        )
        return [memory_from_row(r) for r in rows]

    def existing_ids(self, ids: Collection[str]) -> set[str]:
        """Which of these ids are stored memories, in any state and any scope (the reader is the system)."""
        return self._held("memories", "id", ids)

    def stored_hashes(self, owner: str, content_hashes: Collection[str]) -> set[str]:
        """Which of these content hashes the owner's memories already have, in any state."""
        return self._held("memories", "content_hash", content_hashes, owner=owner)

    def set_status(
        self,
        memory_id: str,
        status: Status,
        reason: InvalidationReason | None,
        superseded_by: str | None,
        at: datetime,
    ) -> None:
        self._exec(
            "UPDATE memories SET status = ?, invalidated_reason = ?, superseded_by = ?, updated_at = ? WHERE id = ?",
            (status.value, reason.value if reason else None, superseded_by, to_text(at), memory_id),
        )

    def mark_restored(self, memory_id: str, at: datetime) -> None:
        self._exec("UPDATE memories SET restored_at = ? WHERE id = ?", (to_text(at), memory_id))

    def set_scope(self, memory_id: str, scope: str, original_scope: str | None, at: datetime) -> None:
        self._exec(
            "UPDATE memories SET scope = ?, original_scope = ?, updated_at = ? WHERE id = ?",
            (scope, original_scope, to_text(at), memory_id),
        )

    def memory_vector(self, memory_id: str) -> np.ndarray | None:
        rows = self._query("SELECT embedding FROM memories WHERE id = ?", (memory_id,))
        if not rows or rows[0]["embedding"] is None:
            return None
        return self._vector_from_value(rows[0]["embedding"])

    def memory_vectors(self, memory_ids: Collection[str]) -> dict[str, np.ndarray]:
        ids = list(dict.fromkeys(memory_ids))
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            rows = self._query(f"SELECT id, embedding FROM memories WHERE id IN ({marks(len(chunk))})", chunk)
            for row in rows:
                if row["embedding"] is not None:
                    found[row["id"]] = self._vector_from_value(row["embedding"])
        return found

    def update_embedding(self, memory_id: str, vector: np.ndarray, model: str) -> None:
        self._exec(
            "UPDATE memories SET embedding = ?, embedding_model = ?, embedding_dim = ? WHERE id = ?",
            (self._embedding_param(vector), model, int(vector.shape[0]), memory_id),
        )

    def live_memories(
        self,
        *,
        owner: str | None = None,
        since: datetime | None = None,
        after: tuple[datetime, str] | None = None,
        kinds: Collection[str] | None = None,
        scope_prefix: str | None = None,
        scopes: Collection[str] | None = None,
        limit: int = 1000,
        newest_first: bool = False,
    ) -> list[Memory]:
        where = ["status = 'live'"]
        params: list[Any] = []
        if owner is not None:
            where.append("owner = ?")
            params.append(owner)
        if after is not None:
            where.append("(created_at > ? OR (created_at = ? AND id > ?))")
            params += [to_text(after[0]), to_text(after[0]), after[1]]
        if kinds:
            kinds = list(kinds)
            where.append(f"kind IN ({marks(len(kinds))})")
            params += kinds
        if scope_prefix is not None:
            where.append("substr(scope, 1, ?) = ?")
            params += [len(scope_prefix), scope_prefix]
        if scopes is not None:
            scopes = sorted(scopes)
            if not scopes:
                return []
            where.append(f"scope IN ({marks(len(scopes))})")
            params += scopes
        order = "DESC" if newest_first else "ASC"
        condition = " AND ".join(where)
        if since is None:
            select, select_params = f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {condition}", params
        else:
            # Created since, or touched since: two index range scans, not a pass over all of the owner's rows.
            select = (
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {condition} AND created_at >= ? UNION "
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {condition} AND updated_at >= ?"
            )
            select_params = [*params, to_text(since), *params, to_text(since)]
        rows = self._query(f"{select} ORDER BY created_at {order}, id {order} LIMIT ?", [*select_params, limit])
        return [memory_from_row(r) for r in rows]

    def iter_memories(self, *, batch: int = 500) -> Iterator[Memory]:
        last = ""
        while True:
            rows = self._query(f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id > ? ORDER BY id LIMIT ?", (last, batch))
            if not rows:
                return
            for row in rows:
                yield memory_from_row(row)
            last = rows[-1]["id"]

    def count_memories(self, *, owner: str | None = None, status: Status | None = None) -> int:
        where, params = ["1 = 1"], []
        if owner is not None:
            where.append("owner = ?")
            params.append(owner)
        if status is not None:
            where.append("status = ?")
            params.append(status.value)
        rows = self._query(f"SELECT count(*) AS n FROM memories WHERE {' AND '.join(where)}", params)
        return int(rows[0]["n"])

    def embedding_models(self) -> dict[str, int]:
        rows = self._query(
            "SELECT coalesce(embedding_model, '') AS model, count(*) AS n FROM memories GROUP BY embedding_model"
        )
        return {r["model"]: int(r["n"]) for r in rows}

    def texts_to_embed(self, *, unless_model: str | None, after: str, limit: int) -> list[tuple[str, str]]:
        """(id, content) of memories after an id whose vector is not from ``unless_model`` (None: all)."""
        if unless_model is None:
            rows = self._query("SELECT id, content FROM memories WHERE id > ? ORDER BY id LIMIT ?", (after, limit))
        else:
            rows = self._query(
                "SELECT id, content FROM memories WHERE id > ? AND (embedding_model IS NULL OR embedding_model <> ?) "
                "ORDER BY id LIMIT ?",
                (after, unless_model, limit),
            )
        return [(r["id"], r["content"]) for r in rows]

    def closed_loops(self, scopes: Collection[str], *, limit: int) -> list[Memory]:
        scopes = sorted(scopes)
        if not scopes:
            return []
        rows = self._query(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE status = 'invalidated' AND invalidated_reason = 'closed' "
            f"AND scope IN ({marks(len(scopes))}) ORDER BY updated_at DESC, id DESC LIMIT ?",
            [*scopes, limit],
        )
        return [memory_from_row(r) for r in rows]

    # -- pins ------------------------------------------------------------------------

    def add_pin(self, memory_id: str, by: str, at: datetime) -> bool:
        return (
            self._exec(
                "INSERT INTO pins(memory_id, pinned_by, pinned_at) VALUES (?, ?, ?) ON CONFLICT (memory_id) DO NOTHING",
                (memory_id, by, to_text(at)),
            )
            > 0
        )

    def remove_pin(self, memory_id: str) -> bool:
        return self._exec("DELETE FROM pins WHERE memory_id = ?", (memory_id,)) > 0

    def pinned(self, memory_ids: Collection[str]) -> set[str]:
        return self._held("pins", "memory_id", memory_ids)

    def pinned_in(self, scopes: Collection[str]) -> list[Memory]:
        scopes = sorted(scopes)
        if not scopes:
            return []
        rows = self._query(
            f"SELECT {PREFIXED_COLUMNS} FROM pins p "
            f"JOIN memories m ON m.id = p.memory_id WHERE m.status = 'live' AND m.scope IN ({marks(len(scopes))}) "
            "ORDER BY p.pinned_at, p.memory_id",
            scopes,
        )
        return [memory_from_row(r) for r in rows]
