"""The store port's ``PortabilityTx``: one family of ``Tx`` (``store/base.py``)."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Protocol

from zero_memory.domain.records import PortabilityCandidate


class PortabilityTx(Protocol):
    """Portability candidacies: personal memories proposed for a project scope (``queries/portability.py``)."""

    def add_portability(self, candidate: PortabilityCandidate) -> bool: ...
    def get_portability(self, candidate_id: str) -> PortabilityCandidate | None: ...
    def portability_of(self, memory_ids: Collection[str]) -> set[str]: ...
    def list_portability(self, *, owner: str, status: str | None, limit: int = 100) -> list[PortabilityCandidate]: ...
    def settle_portability(self, candidate_id: str, status: str, by: str, at: datetime) -> bool: ...
