"""Recall's reads that find nothing in most stores, asked only when something could be found.

Each recall asks which of its hundred or so candidates have an open dispute
and how many agent sessions recall served each lately: two statements with
every candidate's id bound twice or once (0.1 and 0.06 ms at 1,000 memories,
a tenth of recall's cost beside the embedding); then the anchors of the ten it
returns (0.03 ms). A store nobody has disputed anything in, whose recalls
recorded no surfacing within the window, or that anchors no memory to code,
answers them with nothing. One look at the table first (a row of ``disputes``
or ``memory_anchors`` at all; a surfacing since the window's start, by the
index on ``at``) says so in a few microseconds, in the same transaction as the
read it spares: exact, nothing kept between transactions.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any

from zero_memory.clock import to_text
from zero_memory.domain.anchors import AnchorRecord
from zero_memory.domain.records import Channel, Dispute


class EmptyReads:
    """Mixed into ``SQLiteTx`` before the shared queries, whose reads it spares."""

    conn: Any

    def open_disputes_for(self, memory_ids: Collection[str]) -> list[Dispute]:
        if not memory_ids or self.conn.execute("SELECT 1 FROM disputes LIMIT 1").fetchone() is None:
            return []
        found: list[Dispute] = super().open_disputes_for(memory_ids)  # type: ignore[misc]
        return found

    def sessions_served(self, memory_ids: Collection[str], *, since: datetime, channel: Channel) -> dict[str, int]:
        if (
            not memory_ids
            or self.conn.execute("SELECT 1 FROM surfacings WHERE at >= ? LIMIT 1", (to_text(since),)).fetchone() is None
        ):
            return {}
        served: dict[str, int] = super().sessions_served(  # type: ignore[misc]
            memory_ids, since=since, channel=channel
        )
        return served

    def anchors_of(self, memory_ids: Collection[str]) -> dict[str, list[AnchorRecord]]:
        if not memory_ids or self.conn.execute("SELECT 1 FROM memory_anchors LIMIT 1").fetchone() is None:
            return {}
        anchors: dict[str, list[AnchorRecord]] = super().anchors_of(memory_ids)  # type: ignore[misc]
        return anchors
