"""The store port's ``MemoryTx``: one family of ``Tx`` (``store/base.py``)."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from datetime import datetime
from typing import Protocol

import numpy as np

from zero_memory.domain.memory import Brief, InvalidationReason, Memory, Status
from zero_memory.store.ports.reader import Reader


class MemoryTx(Protocol):
    """Memories: their rows, states and vectors, and pins, the standing rules a person marked
    (``queries/memories.py``)."""

    def insert_memory(self, memory: Memory, vector: np.ndarray, model: str) -> None: ...
    def insert_memories(self, memories: Sequence[tuple[Memory, np.ndarray]], model: str) -> None:
        """Insert several new memories at once (a bulk import's batch)."""
        ...

    def get_memory(self, memory_id: str, reader: Reader) -> Memory | None: ...
    def get_memories(self, ids: Collection[str], reader: Reader) -> dict[str, Memory]: ...
    def briefs_with_vectors(self, ids: Collection[str], reader: Reader) -> dict[str, tuple[Brief, np.ndarray | None]]:
        """The briefs of ``get_memories`` with each memory's vector (None if it has none), in one statement."""
        ...

    def existing_ids(self, ids: Collection[str]) -> set[str]:
        """Which of these ids are stored memories, in any state, among those the transaction may see
        (on PostgreSQL, row security binds: the telemetry asks as the system)."""
        ...

    def find_live_by_hash(self, owner: str, scope: str, content_hash: str) -> Memory | None: ...
    def find_by_hash(self, owner: str, content_hash: str) -> list[Memory]: ...
    def stored_hashes(self, owner: str, content_hashes: Collection[str]) -> set[str]:
        """Which of these content hashes the owner's memories already have, in any state."""
        ...

    def set_status(
        self,
        memory_id: str,
        status: Status,
        reason: InvalidationReason | None,
        superseded_by: str | None,
        at: datetime,
    ) -> None: ...

    def set_scope(self, memory_id: str, scope: str, original_scope: str | None, at: datetime) -> None: ...
    def mark_restored(self, memory_id: str, at: datetime) -> None: ...
    def memory_vector(self, memory_id: str) -> np.ndarray | None: ...
    def memory_vectors(self, memory_ids: Collection[str]) -> dict[str, np.ndarray]: ...
    def update_embedding(self, memory_id: str, vector: np.ndarray, model: str) -> None: ...
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
        """Live memories, oldest first (``newest_first`` reverses); ``scopes`` limits them to those scopes."""
        ...

    def closed_loops(self, scopes: Collection[str], *, limit: int) -> list[Memory]:
        """Open loops closed (reason ``closed``) in these scopes, most recently closed first."""
        ...

    def iter_memories(self, *, batch: int = 500) -> Iterator[Memory]: ...
    def count_memories(self, *, owner: str | None = None, status: Status | None = None) -> int: ...
    def embedding_models(self) -> dict[str, int]: ...
    def texts_to_embed(self, *, unless_model: str | None, after: str, limit: int) -> list[tuple[str, str]]: ...
    def add_pin(self, memory_id: str, by: str, at: datetime) -> bool:
        """Pin a memory; False when it was pinned already."""
        ...

    def remove_pin(self, memory_id: str) -> bool:
        """Unpin a memory; False when it was not pinned."""
        ...

    def pinned(self, memory_ids: Collection[str]) -> set[str]: ...
    def pinned_in(self, scopes: Collection[str]) -> list[Memory]:
        """The live pinned memories of these scopes, in the order they were pinned."""
        ...
