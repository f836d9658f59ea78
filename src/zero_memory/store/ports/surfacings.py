"""The store port's ``SurfacingTx``: one family of ``Tx`` (``store/base.py``)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any, Protocol

from zero_memory.domain.records import Channel


class SurfacingTx(Protocol):
    """Surfacings: which memories reached which reader, on which channel, with their per-day rollups
    (``hygiene/retention.py``; ``queries/surfacings.py``)."""

    def add_surfacings(
        self, user_id: str, memory_ids: Sequence[str], at: datetime, *, session_id: str | None, channel: Channel
    ) -> None: ...

    def surfacing_counts(self, *, since: datetime, min_count: int) -> list[tuple[str, int]]:
        """Memories surfaced at least ``min_count`` times since a moment, on any channel, most first."""
        ...

    def surfacings_of(self, memory_ids: Collection[str], *, since: datetime) -> dict[str, int]:
        """How often each memory was surfaced since a moment, on any channel."""
        ...

    def sessions_served(self, memory_ids: Collection[str], *, since: datetime, channel: Channel) -> dict[str, int]:
        """In how many distinct sessions, of every user, each memory was surfaced on ``channel`` since a moment.

        Surfacings without a session are not counted: they cannot be told apart. Only memories the
        transaction's caller can read are counted (on SQLite, every stored one; the ids recall asks about).
        """
        ...

    def rollup_surfacings(self, *, before: datetime) -> int: ...
    def surfacings_by_day(self, *, since: datetime, user_id: str | None = None) -> list[dict[str, Any]]:
        """Surfacings per day and channel (kept and rolled up): day, user_id, channel, count."""
        ...
