"""The store port's ``ReviewTx``: one family of ``Tx`` (``store/base.py``)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from zero_memory.domain.records import Dispute, DisputeStatus, Judgement


@dataclass(frozen=True, slots=True)
class DisputeQuery:
    owner: str | None = None
    scopes: frozenset[str] | None = None
    status: DisputeStatus | None = DisputeStatus.PENDING
    verdict: str | None = None
    shape: str | None = None
    origin: str | None = None
    limit: int = 50
    after: str | None = None


class ReviewTx(Protocol):
    """The review queue (disputes) and the judge's cached judgements (``queries/review.py``)."""

    def add_dispute(self, dispute: Dispute) -> bool: ...
    def get_dispute(self, dispute_id: str) -> Dispute | None: ...
    def dispute_for_pair(self, pair_key: str) -> Dispute | None: ...
    def list_disputes(self, query: DisputeQuery) -> list[Dispute]: ...
    def count_disputes(self, query: DisputeQuery) -> int: ...
    def open_disputes_for(self, memory_ids: Collection[str]) -> list[Dispute]: ...
    def settle_dispute(
        self, dispute_id: str, status: DisputeStatus, resolution: dict[str, Any], by: str, at: datetime
    ) -> bool: ...

    def escalate_dispute(self, dispute_id: str, from_verdict: str, to_verdict: str, run_id: str | None) -> bool:
        """Give a pending row of ``from_verdict`` another verdict, in place, and the run that did it; False when
        it is no longer pending with that verdict."""
        ...

    def get_judgement(self, pair_key: str, model: str) -> Judgement | None: ...
    def judgements_of(self, pair_key: str) -> list[Judgement]: ...
    def put_judgement(self, pair_key: str, judgement: Judgement, at: datetime) -> None: ...
