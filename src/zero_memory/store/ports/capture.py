"""The store port's ``CaptureTx``: one family of ``Tx`` (``store/base.py``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from zero_memory.domain.records import CaptureChunk, ChunkStatus


class CaptureTx(Protocol):
    """The capture stream: staged transcript chunks and daily extraction allowances (``queries/capture.py``)."""

    def add_chunk(self, chunk: CaptureChunk) -> bool:
        """Stage a chunk; False when the owner staged one with the same hash before."""
        ...

    def get_chunk(self, chunk_id: str) -> CaptureChunk | None: ...
    def chunk_by_hash(self, owner: str, chunk_hash: str) -> CaptureChunk | None: ...
    def rearm_chunk(self, chunk_id: str, transcript: str, scope: str, at: datetime) -> bool:
        """Put a given-up chunk back in line with its text; False unless it was given up."""
        ...

    def claim_chunk(self, chunk_id: str, *, at: datetime, lease_until: datetime) -> CaptureChunk | None:
        """Take a due chunk (pending and due, or extracting with an expired lease) for one extraction."""
        ...

    def due_chunks(self, *, at: datetime, owner: str | None = None, limit: int = 50) -> list[str]: ...
    def count_waiting_chunks(self, owner: str) -> int: ...
    def owners_put_off(self, *, at: datetime, reason: str, owner: str | None = None) -> list[str]:
        """Owners of pending chunks not due until after ``at`` whose last error starts with ``reason``."""
        ...

    def bring_forward(self, owner: str, *, at: datetime, reason: str) -> int:
        """Make those chunks of ``owner`` due at ``at``; how many."""
        ...

    def update_chunk(self, chunk_id: str, at: datetime, **fields: Any) -> None:
        """Set the given columns (status, attempts, counts, tokens, errors, …) of a chunk."""
        ...

    def list_chunks(
        self, *, owner: str, since: datetime | None = None, status: ChunkStatus | None = None, limit: int = 100
    ) -> list[CaptureChunk]: ...

    def get_capture_budget(self, user_id: str) -> int | None: ...
    def set_capture_budget(self, user_id: str, daily_tokens: int, at: datetime) -> None: ...
    def clear_capture_budget(self, user_id: str) -> bool: ...
    def ledger_tokens(self, *, owner: str, purpose: str, since: datetime) -> int:
        """Input plus output tokens of the owner's ledger rows of one purpose since ``since``."""
        ...
