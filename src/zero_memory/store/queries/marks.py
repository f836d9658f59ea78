"""What recall reads of its candidates beside their text and vectors, asked in one call: the open disputes,
the sessions served and the anchors (each family's own query; PostgreSQL sends the three at once)."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from zero_memory.domain.records import Channel
from zero_memory.store.ports.search import CandidateMarks
from zero_memory.store.queries.anchors import AnchorQueries
from zero_memory.store.queries.review import ReviewQueries
from zero_memory.store.queries.surfacings import SurfacingQueries


class MarkQueries(ReviewQueries, SurfacingQueries, AnchorQueries):
    def candidate_marks(self, memory_ids: Collection[str], *, since: datetime, channel: Channel) -> CandidateMarks:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return CandidateMarks()
        return CandidateMarks(
            self.open_disputes_for(ids), self.sessions_served(ids, since=since, channel=channel), self.anchors_of(ids)
        )
