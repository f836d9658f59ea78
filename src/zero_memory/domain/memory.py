"""Memories, their kinds, ranks and lifecycle, as plain types and pure rules."""

from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime
from enum import IntEnum, StrEnum
from typing import Any


class Kind(StrEnum):
    FACT = "fact"
    DECISION = "decision"
    PREFERENCE = "preference"
    CONVENTION = "convention"
    GOTCHA = "gotcha"
    REFERENCE = "reference"
    EPISODE = "episode"
    TASK = "task"
    OPEN_QUESTION = "open-question"


OPEN_LOOP_KINDS = frozenset({Kind.TASK, Kind.OPEN_QUESTION})
PROTECTED_KINDS = frozenset({Kind.GOTCHA, Kind.CONVENTION, Kind.DECISION, Kind.PREFERENCE})


class Rank(IntEnum):
    PROVISIONAL = 0
    AGENT = 1
    HUMAN = 2


class AuthorKind(StrEnum):
    HUMAN = "human"
    AGENT = "agent"
    SYSTEM = "system"


class Status(StrEnum):
    LIVE = "live"
    INVALIDATED = "invalidated"


class InvalidationReason(StrEnum):
    FORGOTTEN = "forgotten"
    SUPERSEDED = "superseded"
    DUPLICATE = "duplicate"
    RETIRED = "retired"
    MERGED = "merged"
    CLOSED = "closed"


class LinkType(StrEnum):
    RELATES_TO = "relates_to"
    SUPERSEDES = "supersedes"
    CONTRADICTS = "contradicts"
    DERIVED_FROM = "derived_from"


MAX_CONTENT_CHARS = 16_000
MAX_DECLARED_SUPERSEDES = 10

# Half-lives of the recall age decay, in days, per kind. An open loop does not decay while open
# (``age_factor``); once closed it is history, a done task soonest.
HALF_LIFE_DAYS: dict[Kind, float] = {
    Kind.TASK: 14,
    Kind.EPISODE: 30,
    Kind.OPEN_QUESTION: 30,
    Kind.FACT: 365,
    Kind.GOTCHA: 3 * 365,
    Kind.PREFERENCE: 5 * 365,
    Kind.REFERENCE: 5 * 365,
    Kind.DECISION: 10 * 365,
    Kind.CONVENTION: 10 * 365,
}

# Core facts and references past these ages are reported with ``stale_days``.
FRESHNESS_BUDGET_DAYS: dict[Kind, int] = {Kind.FACT: 180, Kind.REFERENCE: 90}


@dataclass(frozen=True, slots=True)
class Memory:
    id: str
    owner: str
    scope: str
    kind: Kind
    content: str
    author_kind: AuthorKind
    agent_name: str
    rank: Rank
    source: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    status: Status = Status.LIVE
    superseded_by: str | None = None
    invalidated_reason: InvalidationReason | None = None
    content_hash: str = ""
    original_scope: str | None = None
    # When a person, an agent or an undo last brought it back from an invalidation: from then on
    # automation may only queue it, never invalidate it (a false invalidation is not repeated).
    restored_at: datetime | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def live(self) -> bool:
        return self.status is Status.LIVE

    @property
    def restored(self) -> bool:
        return self.restored_at is not None

    @property
    def protected(self) -> bool:
        return is_protected(self.kind, self.rank)

    @property
    def open_loop(self) -> bool:
        return self.kind in OPEN_LOOP_KINDS

    @property
    def session_keys(self) -> frozenset[str]:
        return session_keys(self.source)


@dataclass(frozen=True, slots=True)
class Brief:
    """What ranking a memory and showing it take: a memory without its source, history and hash.

    Recall reads a hundred or so candidates a call and returns ten; making a whole ``Memory`` of each
    (its JSON source, two more timestamps) was about a fifth of its CPU."""

    id: str
    scope: str
    kind: Kind
    content: str
    author_kind: AuthorKind
    agent_name: str
    rank: Rank
    created_at: datetime
    status: Status = Status.LIVE

    @property
    def live(self) -> bool:
        return self.status is Status.LIVE

    @property
    def open_loop(self) -> bool:
        return self.kind in OPEN_LOOP_KINDS


def is_protected(kind: Kind, rank: int) -> bool:
    """An automatic resolution never invalidates a protected memory."""
    return kind in PROTECTED_KINDS and rank >= Rank.AGENT


def retirable_by_automation(restored: bool, disputed: bool) -> bool:
    """The invariant of every automatic retirement: automation never retires a memory someone restored (they
    judged its invalidation false) or one with a pending review-queue row (a person is deciding about it).

    The one statement of the rule: ``transitions.hold`` enforces it on every automatic retirement (queueing
    the question instead), and a pure decision that must know in advance (``hygiene.decide``) asks it too.
    """
    return not (restored or disputed)


def session_keys(source: dict[str, Any]) -> frozenset[str]:
    """The identifiers that make two writes one session (thread or client session)."""
    keys = set()
    for name in ("thread", "client_session_id"):
        value = source.get(name)
        if value:
            keys.add(f"{name}:{value}")
    return frozenset(keys)


def age_days(created_at: datetime, now: datetime) -> float:
    return max(0.0, (now - created_at).total_seconds() / 86_400)


def decay(kind: Kind, age: float) -> float:
    """Exponential age decay: 1.0 when new, 0.5 after one half-life of the kind."""
    return float(0.5 ** (age / HALF_LIFE_DAYS[kind]))


def age_factor(memory: Memory | Brief, age: float) -> float:
    """The age decay recall applies: none for an open loop while it is open, the kind's otherwise.

    A task or an open question is as pressing at three months as on its first
    day, and a hand-over between sessions weeks apart must still find it, until
    someone closes it (``close_loop``, a declared supersede, loop closure).
    """
    if memory.open_loop and memory.live:
        return 1.0
    return decay(memory.kind, age)


def stale_days(kind: Kind, scope_is_core: bool, age: float) -> int | None:
    """Days past the freshness budget for core facts and references, else None."""
    budget = FRESHNESS_BUDGET_DAYS.get(kind)
    if not scope_is_core or budget is None or age <= budget:
        return None
    return int(age - budget)


def content_hash(text: str) -> str:
    """Identity of a text: NFC-normalized, surrounding whitespace ignored."""
    return hashlib.sha256(unicodedata.normalize("NFC", text.strip()).encode()).hexdigest()
