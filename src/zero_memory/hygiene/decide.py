"""Routing: what to do with a judged pair. A pure function, table-driven (docs/spec/hygiene.md §3).

The first rule that matches wins:

1. ``unrelated`` → nothing
2. ``complementary`` → keep both; a ``relates_to`` link only at high confidence
3. both sides provisional → the newer wins, for any other verdict at any confidence
4. exactly one side provisional → it yields to the authoritative side, likewise
5. ``contradiction`` → queue, plus a ``contradicts`` link
6. ``duplicate`` at ``auto_confidence`` → the loser (lower rank, then older) is
   invalidated, unless protected → queue
7. a supersede at ``auto_invalidate_confidence`` → the replaced side is
   invalidated, unless protected → queue
8. anything else → queue

Without a verdict (offer mode) the pair is queued ``unjudged``; with
``allow_auto=False`` (the retro pass) rules 3, 4, 6 and 7 queue instead of act,
and the queue row carries what they would have done (``proposed``) for the
person or agent settling it to accept or not.

Whatever rule picks a loser, the invariant of every automatic retirement
(``domain.memory.retirable_by_automation``: a loser once restored by a person,
an agent or an undo is never retired automatically again) holds it back: the
pair is queued instead, under the same rule (and a retro row proposes nothing
against it). Routing knows only whether a side was restored; whether it has a
pending row is read inside the write by ``transitions.retire_automatically``,
which queues the pair the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from zero_memory.domain.memory import InvalidationReason, Kind, Rank, is_protected, retirable_by_automation
from zero_memory.domain.verdicts import UNJUDGED, Verdict


@dataclass(frozen=True, slots=True)
class Side:
    id: str
    kind: Kind
    rank: int
    created_at: datetime
    restored: bool = False

    @property
    def protected(self) -> bool:
        return is_protected(self.kind, self.rank)

    @property
    def provisional(self) -> bool:
        return self.rank == Rank.PROVISIONAL


@dataclass(frozen=True, slots=True)
class PairFacts:
    """What routing may know of a pair: A and B as the judge saw them."""

    a: Side
    b: Side

    def newer_first(self) -> tuple[Side, Side]:
        """(newer, older); ties broken by id so the answer is stable."""
        if (self.a.created_at, self.a.id) > (self.b.created_at, self.b.id):
            return self.a, self.b
        return self.b, self.a


@dataclass(frozen=True, slots=True)
class Gates:
    auto_confidence: float = 0.9
    auto_invalidate_confidence: float = 0.95
    complementary_link_confidence: float = 0.9


class Action(StrEnum):
    NOTHING = "nothing"
    LINK = "link"
    INVALIDATE = "invalidate"
    QUEUE = "queue"


@dataclass(frozen=True, slots=True)
class Outcome:
    action: Action
    rule: int
    loser: str | None = None
    winner: str | None = None
    reason: InvalidationReason | None = None
    verdict: str | None = None
    direction: str | None = None
    contradicts_link: bool = False
    # A queued outcome of the retro pass: the automatic action it held back.
    proposed: Outcome | None = None

    @property
    def automatic(self) -> bool:
        return self.action is Action.INVALIDATE


NOTHING = Outcome(Action.NOTHING, rule=1)


def _invalidate(rule: int, loser: Side, winner: Side, verdict: Verdict) -> Outcome:
    if not retirable_by_automation(loser.restored, disputed=False):
        return held(rule, verdict.value)
    reason = InvalidationReason.DUPLICATE if verdict is Verdict.DUPLICATE else InvalidationReason.SUPERSEDED
    return Outcome(Action.INVALIDATE, rule, loser=loser.id, winner=winner.id, reason=reason, verdict=verdict.value)


def _queue(rule: int, verdict: str, *, direction: str | None = None, contradicts: bool = False) -> Outcome:
    return Outcome(Action.QUEUE, rule, verdict=verdict, direction=direction, contradicts_link=contradicts)


def held(rule: int, verdict: str | None) -> Outcome:
    """The queue row for an invalidation that may not happen automatically (the loser was restored or disputed)."""
    verdict = verdict or UNJUDGED
    if verdict in (Verdict.A_SUPERSEDES_B.value, Verdict.B_SUPERSEDES_A.value):
        return _queue(rule, "supersedes", direction=verdict)
    return _queue(rule, verdict, contradicts=verdict == Verdict.CONTRADICTION.value)


def _queue_verdict(verdict: Verdict) -> Outcome:
    """The queue row for a verdict: supersedes rows carry their direction."""
    if verdict.is_supersede:
        return _queue(8, "supersedes", direction=verdict.value)
    return _queue(8, verdict.value)


def decide(
    pair: PairFacts, verdict: Verdict | None, confidence: float, gates: Gates, *, allow_auto: bool = True
) -> Outcome:
    if verdict is None:
        return _queue(8, UNJUDGED)
    if verdict is Verdict.UNRELATED:
        return NOTHING
    if verdict is Verdict.COMPLEMENTARY:
        if confidence >= gates.complementary_link_confidence:
            return Outcome(Action.LINK, rule=2, verdict=verdict.value)
        return Outcome(Action.NOTHING, rule=2, verdict=verdict.value)
    if not allow_auto:
        outcome = _queue_verdict(verdict)
        automatic = decide(pair, verdict, confidence, gates)
        return Outcome(
            outcome.action,
            outcome.rule,
            verdict=outcome.verdict,
            direction=outcome.direction,
            contradicts_link=verdict is Verdict.CONTRADICTION,
            proposed=automatic if automatic.automatic else None,
        )
    a, b = pair.a, pair.b
    if a.provisional and b.provisional:
        newer, older = pair.newer_first()
        return _invalidate(3, older, newer, verdict)
    if a.provisional != b.provisional:
        provisional, authoritative = (a, b) if a.provisional else (b, a)
        return _invalidate(4, provisional, authoritative, verdict)
    if verdict is Verdict.CONTRADICTION:
        return _queue(5, verdict.value, contradicts=True)
    if verdict is Verdict.DUPLICATE:
        if confidence < gates.auto_confidence:
            return _queue(8, verdict.value)
        winner, loser = _duplicate_winner(pair)
        if loser.protected:
            return _queue(6, verdict.value)
        return _invalidate(6, loser, winner, verdict)
    # a_supersedes_b or b_supersedes_a
    if confidence < gates.auto_invalidate_confidence:
        return _queue(8, "supersedes", direction=verdict.value)
    replacing, replaced = (a, b) if verdict is Verdict.A_SUPERSEDES_B else (b, a)
    if replaced.protected:
        return _queue(7, "supersedes", direction=verdict.value)
    return _invalidate(7, replaced, replacing, verdict)


def _duplicate_winner(pair: PairFacts) -> tuple[Side, Side]:
    """(winner, loser) of a duplicate: higher rank, then newer."""
    a, b = pair.a, pair.b
    if a.rank != b.rank:
        return (a, b) if a.rank > b.rank else (b, a)
    return pair.newer_first()
