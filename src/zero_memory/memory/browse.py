"""Listing memories for the dashboard: search across every visible scope, by lifecycle.

Live memories with a query go through ``recall`` (the ranking agents get).
Without a query, live memories come newest first from each visible scope.
Invalidated memories never reach recall or the store's search indexes, so
they are found by walking the caller's visible memories and matching the
query's words; the walk keeps only the newest ``limit``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, cast

from zero_memory import errors
from zero_memory.access.caller import Caller
from zero_memory.access.visibility import visibility
from zero_memory.app import App
from zero_memory.domain import scopes
from zero_memory.domain.memory import Memory, Status, age_days
from zero_memory.domain.records import Visibility
from zero_memory.memory.recall import MAX_LIMIT as RECALL_LIMIT
from zero_memory.memory.recall import recall
from zero_memory.store.base import Tx

Lifecycle = Literal["live", "invalidated", "all"]
LIFECYCLES: tuple[Lifecycle, ...] = ("live", "invalidated", "all")
MAX_LIMIT = 500


@dataclass(frozen=True, slots=True)
class Card:
    """One memory as a list shows it."""

    id: str
    content: str
    kind: str
    scope: str
    rank: int
    author_kind: str
    agent_name: str
    status: str
    invalidated_reason: str | None
    age_days: float
    disputed: bool


@dataclass(frozen=True, slots=True)
class Listing:
    cards: list[Card]
    query: str
    lifecycle: Lifecycle
    limit: int
    more: bool


def browse(app: App, caller: Caller, *, query: str = "", lifecycle: str = "live", limit: int = 50) -> Listing:
    if lifecycle not in LIFECYCLES:
        raise errors.validation("lifecycle: expected live, invalidated or all")
    if not 1 <= limit <= MAX_LIMIT:
        raise errors.validation(f"limit: must be between 1 and {MAX_LIMIT}")
    text = query.strip()
    cards: list[Card] = []
    more = False
    if lifecycle in ("live", "all") and text:
        hits = recall(app, caller, text, scopes_arg=["*"], limit=min(limit, RECALL_LIMIT), channel=None).hits
        cards = [
            Card(
                h.id,
                h.content,
                h.kind.value,
                h.scope,
                h.rank,
                h.author_kind,
                h.agent_name,
                "live",
                None,
                h.age_days,
                h.disputed,
            )
            for h in hits
        ]
    now = app.clock()
    with app.store.tx() as tx:
        vis = visibility(tx, caller.uid)
        if lifecycle == "live" and not text:
            found, more = newest_live(tx, vis, limit)
        elif lifecycle == "live":
            found = []
        else:
            statuses = {Status.INVALIDATED} if text or lifecycle == "invalidated" else {Status.LIVE, Status.INVALIDATED}
            found, more = newest_matching(tx.iter_memories(), vis, statuses, words(text), limit - len(cards))
        disputed = {i for d in tx.open_disputes_for([m.id for m in found]) for i in (d.memory_a, d.memory_b) if i}
    cards += [card(m, age_days(m.created_at, now), m.id in disputed) for m in found]
    return Listing(cards=cards, query=text, lifecycle=cast(Lifecycle, lifecycle), limit=limit, more=more)


def card(memory: Memory, age: float, disputed: bool) -> Card:
    return Card(
        id=memory.id,
        content=memory.content,
        kind=memory.kind.value,
        scope=memory.scope,
        rank=int(memory.rank),
        author_kind=memory.author_kind.value,
        agent_name=memory.agent_name,
        status=memory.status.value,
        invalidated_reason=memory.invalidated_reason.value if memory.invalidated_reason else None,
        age_days=round(age, 3),
        disputed=disputed,
    )


def words(query: str) -> list[str]:
    return [w for w in query.casefold().split() if w]


def matches(memory: Memory, wanted: list[str]) -> bool:
    """Every word of the query appears in the memory's text (case-insensitive)."""
    text = memory.content.casefold()
    return all(w in text for w in wanted)


def newest_matching(
    memories: Iterable[Memory], vis: Visibility, statuses: set[Status], wanted: list[str], limit: int
) -> tuple[list[Memory], bool]:
    """The newest ``limit`` visible memories in ``statuses`` matching ``wanted``, and whether older ones exist.

    ``memories`` come oldest first (ids sort by creation), so a bounded deque
    keeps the newest without holding them all.
    """
    if limit <= 0:
        return [], False
    kept: deque[Memory] = deque(maxlen=limit)
    dropped = False
    for memory in memories:
        if memory.status in statuses and vis.can_read(memory.scope) and matches(memory, wanted):
            dropped = dropped or len(kept) == limit
            kept.append(memory)
    return list(reversed(kept)), dropped


def newest_live(tx: Tx, vis: Visibility, limit: int) -> tuple[list[Memory], bool]:
    """The newest live memories across the visible scopes, asking each scope for its newest."""
    found: dict[str, Memory] = {}
    for scope in sorted(vis.readable):
        parsed = scopes.parse(scope)
        # A prefix also matches longer scopes (user.bo matches user.bob): a personal scope's
        # memories are its user's own, so the owner narrows it to the right ones.
        owner = parsed.uid if not parsed.shared else None
        for memory in tx.live_memories(owner=owner, scope_prefix=scope, limit=limit + 1, newest_first=True):
            if vis.can_read(memory.scope):
                found[memory.id] = memory
    ordered = sorted(found.values(), key=lambda m: (m.created_at, m.id), reverse=True)
    return ordered[:limit], len(ordered) > limit
