"""The store port's ``GuardTx``: one family of ``Tx`` (``store/base.py``)."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Protocol


class GuardTx(Protocol):
    """Re-examination guards: a memory re-examined by a model is not asked again (``queries/guards.py``)."""

    def guarded(self, memory_ids: Collection[str], model: str) -> set[str]: ...
    def add_guard(self, memory_id: str, model: str, outcome: str, at: datetime) -> None: ...
