"""The store port's ``UsageTx``: one family of ``Tx`` (``store/base.py``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol


class UsageTx(Protocol):
    """The model-usage ledger and the tools' usage events, with their per-day rollups
    (``hygiene/retention.py``; ``queries/usage.py``)."""

    def add_ledger(
        self,
        *,
        owner: str,
        model: str,
        purpose: str,
        input_tokens: int,
        output_tokens: int,
        latency_ms: int,
        outcome: str,
        run_id: str | None,
        at: datetime,
    ) -> None: ...

    def ledger(self, *, owner: str | None = None, run_id: str | None = None) -> list[dict[str, Any]]: ...
    def add_usage_event(
        self, *, user_id: str, tool: str, client: str, outcome: str, declared_supersede: bool, at: datetime
    ) -> None: ...

    def usage_events(self, *, tool: str | None = None, since: datetime | None = None) -> list[dict[str, Any]]: ...
    def rollup_usage_events(self, *, before: datetime) -> int: ...
    def usage_by_day(
        self, *, since: datetime, tool: str | None = None, user_id: str | None = None
    ) -> list[dict[str, Any]]:
        """Usage events per day (kept and rolled up): day, user_id, tool, client, outcome, declared_supersede, count."""
        ...
