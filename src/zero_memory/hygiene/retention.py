"""Retention: old surfacings and usage events become per-day counts.

Every recall writes a surfacing per hit and every tool call a usage event, so
both tables grow with traffic for ever. What reads them needs the rows only for
a while: re-examination counts surfacings within ``rescan_window_days``, recall's
reinforcement and the portability audit within 90 days, the Insights page shows
30 days of usage. Older rows are folded into ``surfacing_days`` and
``usage_event_days`` (one count per day and user, per memory and channel or per
tool, client and outcome), then removed; ``Tx.usage_by_day`` reads both, so the
charts do not change. Audit rows are never touched.

Surfacings are kept for the re-examination window, but never for less than the
windows of the other readers, so no ranking or audit changes; usage events for
``ZM_USAGE_RETENTION_DAYS``. Each pass is one transaction with its audit row.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from zero_memory.app import App
from zero_memory.hygiene.portability import USAGE_WINDOW_DAYS
from zero_memory.memory.recall import REINFORCEMENT_WINDOW_DAYS
from zero_memory.settings import Settings
from zero_memory.store import system_tx


@dataclass(frozen=True, slots=True)
class Cutoffs:
    surfacings: datetime
    usage_events: datetime


@dataclass(frozen=True, slots=True)
class Retention:
    cutoffs: Cutoffs
    surfacings: int
    usage_events: int

    def to_dict(self) -> dict[str, object]:
        return {
            "surfacings_rolled_up": self.surfacings,
            "usage_events_rolled_up": self.usage_events,
            "surfacings_before": self.cutoffs.surfacings.isoformat(),
            "usage_events_before": self.cutoffs.usage_events.isoformat(),
        }


def cutoffs(settings: Settings, now: datetime) -> Cutoffs:
    """Rows older than these are rolled up: nothing any reader still counts."""
    surfacing_days = max(settings.hygiene.rescan_window_days, REINFORCEMENT_WINDOW_DAYS, USAGE_WINDOW_DAYS)
    return Cutoffs(now - timedelta(days=surfacing_days), now - timedelta(days=settings.usage_retention_days))


def roll_up(app: App, *, actor: str, run_id: str | None = None) -> Retention:
    now = app.clock()
    limits = cutoffs(app.settings, now)
    with system_tx(app.store, "retention", write=True) as tx:
        surfacings = tx.rollup_surfacings(before=limits.surfacings)
        usage_events = tx.rollup_usage_events(before=limits.usage_events)
        done = Retention(limits, surfacings, usage_events)
        tx.add_audit(
            actor=actor,
            action="retention.rollup",
            owner=None,
            memory_ids=[],
            payload=done.to_dict(),
            run_id=run_id,
            at=now,
        )
    return done
