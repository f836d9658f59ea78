"""The store port's ``RunTx``: one family of ``Tx`` (``store/base.py``)."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any, Protocol

from zero_memory.domain.records import Run, RunStatus


class RunTx(Protocol):
    """Runs of the automatic passes: claimed once, kept alive, finished or interrupted (``queries/runs.py``)."""

    def claim_run(self, run: Run) -> bool: ...
    def touch_run(self, run_id: str, summary: dict[str, Any], at: datetime) -> None: ...
    def interrupt_runs(self, *, heartbeat_before: datetime, at: datetime) -> list[str]: ...
    def finish_run(self, run_id: str, status: RunStatus, summary: dict[str, Any], at: datetime) -> None: ...
    def get_run(self, run_id: str) -> Run | None: ...
    def list_runs(
        self,
        *,
        owner: str | None = None,
        limit: int = 50,
        kinds: Collection[str] | None = None,
        not_kinds: Collection[str] | None = None,
    ) -> list[Run]:
        """Runs newest first; ``kinds`` keeps those kinds of run, ``not_kinds`` leaves those out."""
        ...

    def runs_with_status(self, status: RunStatus) -> list[Run]: ...
