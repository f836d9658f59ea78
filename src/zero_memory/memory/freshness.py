"""Freshness: a core fact or reference past its budget is reported with ``stale_days`` until a person re-affirms it.

The budget (180 days for a fact, 90 for a reference) counts from the memory's
creation, or from its latest re-affirmation: a person who checked the memory
against the world and found it still true says so (``zm reaffirm ID``, the
dashboard's Uphold on the memory's page), and the budget starts again. A
re-affirmation is an audit row (action ``reaffirm``), so the trail says who
vouched for the memory and when; nothing else about the memory changes (it
does not become a recent memory for the sweep).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from zero_memory import transitions
from zero_memory.domain import scopes
from zero_memory.domain.memory import FRESHNESS_BUDGET_DAYS, Brief, Memory, age_days, stale_days
from zero_memory.store.base import Tx

REAFFIRM = transitions.REAFFIRM


def has_budget(memory: Memory) -> bool:
    return scopes.is_core(memory.scope) and memory.kind in FRESHNESS_BUDGET_DAYS


def affirmed(tx: Tx, memories: Iterable[Memory | Brief], now: datetime) -> dict[str, datetime]:
    """The latest re-affirmation of each memory past its budget since creation (one query, often none)."""
    return tx.last_action_at([m.id for m in memories if stale_days_of(m, now, None) is not None], REAFFIRM)


def stale_days_of(memory: Memory | Brief, now: datetime, reaffirmed: datetime | None) -> int | None:
    """Days past the freshness budget, counted from creation or the latest re-affirmation; None within it."""
    since = max(memory.created_at, reaffirmed) if reaffirmed else memory.created_at
    return stale_days(memory.kind, scopes.is_core(memory.scope), age_days(since, now))
