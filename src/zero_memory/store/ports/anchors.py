"""Anchors: where in the code a memory points, and what verification found there (``queries/anchors.py``)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Protocol

from zero_memory.domain.anchors import AnchorRecord


class AnchorTx(Protocol):
    """The anchors part of a transaction."""

    def set_anchors(self, memory_id: str, anchors: Sequence[AnchorRecord], at: datetime) -> None:
        """Replace the memory's anchors with these."""
        ...

    def anchors_of(self, memory_ids: Collection[str]) -> dict[str, list[AnchorRecord]]:
        """Each memory's anchors (only memories that have some), in path order."""
        ...

    def anchors_in(self, scopes: Collection[str]) -> list[AnchorRecord]:
        """Every anchor of the live memories of these scopes."""
        ...

    def drifted_in(self, scopes: Collection[str], *, limit: int) -> list[str]:
        """Live memories of these scopes with an anchor whose code changed or went, at most ``limit``."""
        ...

    def update_anchor(self, old: AnchorRecord, new: AnchorRecord) -> bool:
        """Write what verification found (a stamp, a state, a new place); False when ``old`` is gone."""
        ...

    def update_outdated(self, dispute_id: str, reason: str) -> bool:
        """Bring an open ``outdated`` row's evidence up to date (the code kept changing); False if it is settled."""
        ...
