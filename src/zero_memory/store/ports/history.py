"""The store port's ``HistoryTx``: one family of ``Tx`` (``store/base.py``)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any, Protocol

from zero_memory.domain.records import AuditEntry, Link


class HistoryTx(Protocol):
    """Links between memories and the audit trail (``queries/history.py``)."""

    def add_link(self, link: Link) -> None: ...
    def links_of(self, memory_id: str) -> list[Link]: ...
    def has_link(self, a: str, b: str, link_type: str) -> bool: ...
    def remove_links(self, *, dst: str, link_type: str, at: datetime) -> list[Link]: ...
    def links_of_run(self, run_id: str) -> list[Link]: ...
    def remove_link(self, link_id: str, at: datetime) -> None: ...
    def add_audit(
        self,
        *,
        actor: str,
        action: str,
        owner: str | None,
        memory_ids: Sequence[str],
        payload: dict[str, Any],
        run_id: str | None,
        at: datetime,
    ) -> int: ...

    def add_memory_audits(
        self,
        *,
        actor: str,
        action: str,
        owner: str | None,
        payloads: Sequence[tuple[str, dict[str, Any]]],
        run_id: str | None,
        at: datetime,
    ) -> None:
        """One audit row per (memory id, payload), as ``add_audit`` would write each (a bulk import's batch)."""
        ...

    def audit_for_memory(
        self,
        memory_id: str,
        *,
        limit: int = 200,
        before: int | None = None,
        actions: Collection[str] | None = None,
    ) -> list[AuditEntry]:
        """A memory's audit rows, newest first: at most ``limit``, older than the row numbered ``before``,
        only of ``actions`` when given (a long-lived memory's recent trail is what a reader needs)."""
        ...

    def audit_for_run(self, run_id: str) -> list[AuditEntry]: ...
    def audit_actions(self, action: str, *, since: datetime | None = None) -> list[AuditEntry]: ...
    def last_action_at(self, memory_ids: Sequence[str], action: str) -> dict[str, datetime]: ...
