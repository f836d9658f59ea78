"""The store port's ``SearchTx``: one family of ``Tx`` (``store/base.py``)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, TypeVar

import numpy as np

from zero_memory.domain.anchors import AnchorRecord
from zero_memory.domain.memory import Brief, Memory
from zero_memory.domain.records import Channel, Dispute
from zero_memory.store.fulltext import TextPlan
from zero_memory.store.ports.reader import Reader

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Neighbour:
    memory: Memory
    similarity: float


@dataclass(frozen=True, slots=True)
class BriefNeighbour:
    brief: Brief
    similarity: float


@dataclass(frozen=True, slots=True)
class CandidateMarks:
    """What recall reads of its candidates beside their text and vectors: the open disputes about them
    (``ReviewTx.open_disputes_for``), in how many sessions each was served (``SurfacingTx.sessions_served``),
    and their anchors (``AnchorTx.anchors_of``)."""

    disputes: list[Dispute] = field(default_factory=list)
    sessions: Mapping[str, int] = field(default_factory=dict)
    anchors: Mapping[str, list[AnchorRecord]] = field(default_factory=dict)


class VectorSearch(Protocol):
    """``Tx.similar`` as briefs, made together with other reads of the transaction (recall's full text): a
    store whose index is searched in this process runs them on another thread while it searches (the
    threads are the store's business, not the caller's); one that searches in SQL runs them first."""

    def run(self, vector: Callable[[], np.ndarray], beside: Callable[[], T]) -> tuple[list[BriefNeighbour], T]:
        """What ``similar`` finds for the vector ``vector()`` returns, as briefs (the candidates that pass the
        filters as the transaction sees them, scored exactly), and what ``beside`` returns. ``vector`` is
        asked for once the search needs it (it may still be being computed meanwhile, recall's query
        embedding on a store whose reads wait on a server): a store that reads ``beside`` first asks for it
        after. ``beside`` may read the transaction, and is the only one to while it runs."""
        ...


class SearchTx(Protocol):
    """Search: nearest vectors (each adapter's own) and full text (``queries/text.py``)."""

    def similar(
        self,
        vector: np.ndarray,
        *,
        floor: float,
        limit: int,
        scopes: Collection[str] | None = None,
        owner: str | None = None,
        exclude: Collection[str] = (),
        kinds: Collection[str] | None = None,
    ) -> list[Neighbour]: ...

    def vector_search(
        self, *, floor: float, limit: int, scopes: Collection[str] | None = None, kinds: Collection[str] | None = None
    ) -> VectorSearch:
        """``similar`` over a vector not known yet: the search is prepared in the transaction (the index
        caught up with it), its vector proposed later, possibly from another thread."""
        ...

    def similar_many(
        self, vectors: np.ndarray, *, floor: float, limit: int, owner: str, excludes: list[Collection[str]]
    ) -> list[list[Neighbour]]: ...

    def text_plan(self, query: str) -> TextPlan:
        """The query's words weighed over this store, and the rarest of them (store/fulltext.py)."""
        ...

    def text_candidates(self, plan: TextPlan, *, scopes: Collection[str], limit: int) -> list[str]:
        """Up to ``limit`` live memories of ``scopes`` holding a matched word of the plan, by the weight of
        those words, then newest first."""
        ...

    def text_briefs(
        self, plan: TextPlan, *, scopes: Collection[str], limit: int, reader: Reader
    ) -> dict[str, tuple[Brief, np.ndarray | None]]:
        """``briefs_with_vectors`` of the ``text_candidates``: what recall reads of its full-text side."""
        ...

    def candidate_marks(self, memory_ids: Collection[str], *, since: datetime, channel: Channel) -> CandidateMarks:
        """``open_disputes_for``, ``sessions_served(since, channel)`` and ``anchors_of`` these memories, asked
        together: one round trip on PostgreSQL."""
        ...

    def fulltext(self, query: str, *, scopes: Collection[str], limit: int) -> list[str]:
        """Full text alone: the candidates of the query's plan, ranked by ``TextPlan.score``."""
        ...
