"""Routing (docs/spec/hygiene.md §3), checked exhaustively against an oracle written from the spec's table.

The oracle below is deliberately written from the table, rule by rule, and
not from ``decide``'s code: every verdict (and none) × the rank of each side ×
whether each side's kind is protected × which side is newer × a confidence on
either side of every gate × ``allow_auto``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zero_memory.domain.memory import Kind
from zero_memory.domain.verdicts import Verdict
from zero_memory.hygiene.decide import Action, Gates, Outcome, PairFacts, Side, decide

T0 = datetime(2025, 1, 1, tzinfo=UTC)
GATES = Gates()  # auto 0.9, auto-invalidate 0.95, complementary link 0.9

VERDICTS: list[Verdict | None] = [*Verdict, None]
RANKS = (0, 1, 2)
PROTECTED_KINDS = {Kind.GOTCHA, Kind.CONVENTION, Kind.DECISION, Kind.PREFERENCE}
KIND_CHOICES = (Kind.FACT, Kind.DECISION)  # a kind that is never protected, one that is at rank >= 1
# Both sides of every gate: 0.89/0.9 (auto and complementary link), 0.94/0.95 (auto-invalidate).
CONFIDENCES = (0.0, 0.89, 0.9, 0.94, 0.95, 1.0)
RESTORED = ("", "a", "b", "ab")  # which sides were once restored after an invalidation


@dataclass(frozen=True)
class Expected:
    action: str
    loser: str | None = None
    winner: str | None = None
    reason: str | None = None
    queued_verdict: str | None = None
    direction: str | None = None
    contradicts_link: bool = False


def is_protected(side: Side) -> bool:
    return side.kind in PROTECTED_KINDS and side.rank >= 1


def newer_and_older(a: Side, b: Side) -> tuple[Side, Side]:
    return (a, b) if a.created_at > b.created_at else (b, a)


def queue_row(verdict: Verdict) -> Expected:
    """The review-queue row a verdict becomes: supersedes rows carry their direction."""
    if verdict in (Verdict.A_SUPERSEDES_B, Verdict.B_SUPERSEDES_A):
        return Expected("queue", queued_verdict="supersedes", direction=verdict.value)
    if verdict is Verdict.CONTRADICTION:
        return Expected("queue", queued_verdict="contradiction", contradicts_link=True)
    return Expected("queue", queued_verdict=verdict.value)


def invalidation(loser: Side, winner: Side, verdict: Verdict) -> Expected:
    # Whatever rule picked it, a loser once restored is never invalidated automatically: the pair is queued.
    if loser.restored:
        return queue_row(verdict)
    reason = "duplicate" if verdict is Verdict.DUPLICATE else "superseded"
    return Expected("invalidate", loser=loser.id, winner=winner.id, reason=reason)


def oracle(verdict: Verdict | None, a: Side, b: Side, confidence: float, allow_auto: bool) -> Expected:
    """docs/spec/hygiene.md §3, first matching rule wins."""
    if verdict is None:  # offer mode: nothing judged, nothing decided
        return Expected("queue", queued_verdict="unjudged")
    # 1. unrelated → nothing
    if verdict is Verdict.UNRELATED:
        return Expected("nothing")
    # 2. complementary → keep both; link only at >= 0.9; never queued
    if verdict is Verdict.COMPLEMENTARY:
        return Expected("link") if confidence >= 0.9 else Expected("nothing")
    # the retro pass never auto-resolves: what would have been an action is a question
    if not allow_auto:
        return queue_row(verdict)
    # 3. both provisional → the newer wins, any confidence
    if a.rank == 0 and b.rank == 0:
        newer, older = newer_and_older(a, b)
        return invalidation(older, newer, verdict)
    # 4. exactly one provisional → it yields to the authoritative side, any confidence
    if a.rank == 0 or b.rank == 0:
        provisional, authoritative = (a, b) if a.rank == 0 else (b, a)
        return invalidation(provisional, authoritative, verdict)
    # 5. contradiction → queue plus a contradicts link
    if verdict is Verdict.CONTRADICTION:
        return queue_row(verdict)
    # 6. duplicate at >= 0.9 → higher rank wins, then the newer one
    if verdict is Verdict.DUPLICATE and confidence >= 0.9:
        if a.rank != b.rank:
            winner, loser = (a, b) if a.rank > b.rank else (b, a)
        else:
            winner, loser = newer_and_older(a, b)
        return queue_row(verdict) if is_protected(loser) else invalidation(loser, winner, verdict)
    # 7. supersede at >= 0.95 → the replaced side goes, unless protected
    if verdict in (Verdict.A_SUPERSEDES_B, Verdict.B_SUPERSEDES_A) and confidence >= 0.95:
        replacing, replaced = (a, b) if verdict is Verdict.A_SUPERSEDES_B else (b, a)
        return queue_row(verdict) if is_protected(replaced) else invalidation(replaced, replacing, verdict)
    # 8. anything else → queue
    return queue_row(verdict)


def observed(outcome: Outcome) -> Expected:
    if outcome.action is Action.QUEUE:
        return Expected(
            "queue",
            queued_verdict=outcome.verdict,
            direction=outcome.direction,
            contradicts_link=outcome.contradicts_link,
        )
    if outcome.action is Action.INVALIDATE:
        assert not outcome.contradicts_link and outcome.direction is None
        return Expected(
            "invalidate",
            loser=outcome.loser,
            winner=outcome.winner,
            reason=outcome.reason.value if outcome.reason else None,
        )
    assert (outcome.loser, outcome.winner, outcome.reason, outcome.contradicts_link) == (None, None, None, False)
    return Expected(outcome.action.value)


def pair_of(rank_a: int, kind_a: Kind, rank_b: int, kind_b: Kind, a_is_newer: bool, restored: str = "") -> PairFacts:
    """``restored``: which side ("a", "b" or both, "ab") was once restored."""
    older, newer = T0, T0 + timedelta(days=3)
    a = Side("mem_a", kind_a, rank_a, newer if a_is_newer else older, "a" in restored)
    b = Side("mem_b", kind_b, rank_b, older if a_is_newer else newer, "b" in restored)
    return PairFacts(a, b)


@pytest.mark.parametrize("allow_auto", [True, False], ids=["auto", "no-auto"])
@pytest.mark.parametrize("confidence", CONFIDENCES)
@pytest.mark.parametrize("verdict", VERDICTS, ids=[str(v) if v else "unjudged" for v in VERDICTS])
def test_every_routing_combination_follows_the_table(
    verdict: Verdict | None, confidence: float, allow_auto: bool
) -> None:
    wrong = []
    for rank_a, rank_b, kind_a, kind_b, a_is_newer, restored in itertools.product(
        RANKS, RANKS, KIND_CHOICES, KIND_CHOICES, (True, False), RESTORED
    ):
        pair = pair_of(rank_a, kind_a, rank_b, kind_b, a_is_newer, restored)
        expected = oracle(verdict, pair.a, pair.b, confidence, allow_auto)
        got = observed(decide(pair, verdict, confidence, GATES, allow_auto=allow_auto))
        if got != expected:
            wrong.append(
                f"restored={restored or 'none'} A=({kind_a}, rank {rank_a}{', newer' if a_is_newer else ''}) "
                f"B=({kind_b}, rank {rank_b}{'' if a_is_newer else ', newer'}): expected {expected}, got {got}"
            )
    assert not wrong, "\n".join(wrong)


def test_the_table_covers_every_rank_kind_and_age_combination() -> None:
    """3 ranks × 2 kinds on each side × which is newer; with 6 confidences, 2 modes and 7 verdicts."""
    combos = list(itertools.product(RANKS, RANKS, KIND_CHOICES, KIND_CHOICES, (True, False)))
    assert len(combos) == 72
    assert len(combos) * len(CONFIDENCES) * 2 * len(VERDICTS) == 6048
    pairs = [pair_of(rank_a, kind_a, rank_b, kind_b, newer) for rank_a, rank_b, kind_a, kind_b, newer in combos]
    assert {(is_protected(p.a), is_protected(p.b)) for p in pairs} == set(itertools.product((True, False), repeat=2))


# -- a few rows spelled out ------------------------------------------------------------


def side(name: str, kind: Kind = Kind.FACT, rank: int = 1, days: int = 0) -> Side:
    return Side(name, kind, rank, T0 + timedelta(days=days))


def test_a_complementary_pair_below_the_link_gate_is_left_alone_even_against_a_human_memory() -> None:
    pair = PairFacts(side("old", rank=1), side("new", kind=Kind.DECISION, rank=2, days=1))
    assert decide(pair, Verdict.COMPLEMENTARY, 0.89, GATES).action is Action.NOTHING
    assert decide(pair, Verdict.COMPLEMENTARY, 0.9, GATES).action is Action.LINK


def test_two_provisional_memories_collapse_to_the_newer_one_at_any_confidence() -> None:
    pair = PairFacts(side("old", rank=0), side("new", rank=0, days=1))
    outcome = decide(pair, Verdict.CONTRADICTION, 0.1, GATES)
    assert (outcome.action, outcome.loser, outcome.winner) == (Action.INVALIDATE, "old", "new")


def test_a_provisional_memory_yields_to_an_authoritative_one_even_if_it_is_newer() -> None:
    pair = PairFacts(side("old", kind=Kind.DECISION, rank=1), side("new", rank=0, days=1))
    outcome = decide(pair, Verdict.B_SUPERSEDES_A, 0.99, GATES)
    assert (outcome.action, outcome.loser, outcome.winner) == (Action.INVALIDATE, "new", "old")


def test_a_duplicate_s_winner_is_the_higher_rank_before_the_newer() -> None:
    pair = PairFacts(side("old", rank=2), side("new", rank=1, days=1))
    outcome = decide(pair, Verdict.DUPLICATE, 0.9, GATES)
    assert (outcome.loser, outcome.winner, outcome.reason) == ("new", "old", "duplicate")


def test_a_protected_duplicate_loser_is_queued_not_invalidated() -> None:
    pair = PairFacts(side("old", kind=Kind.GOTCHA), side("new", kind=Kind.GOTCHA, days=1))
    outcome = decide(pair, Verdict.DUPLICATE, 1.0, GATES)
    assert (outcome.action, outcome.verdict) == (Action.QUEUE, "duplicate")


def test_a_supersede_just_below_the_invalidate_gate_is_queued_with_its_direction() -> None:
    pair = PairFacts(side("old"), side("new", days=1))
    outcome = decide(pair, Verdict.B_SUPERSEDES_A, 0.94, GATES)
    assert (outcome.action, outcome.verdict, outcome.direction) == (Action.QUEUE, "supersedes", "b_supersedes_a")


def test_a_contradiction_between_authoritative_memories_is_queued_with_a_contradicts_link() -> None:
    outcome = decide(PairFacts(side("old"), side("new", days=1)), Verdict.CONTRADICTION, 1.0, GATES)
    assert (outcome.action, outcome.verdict, outcome.contradicts_link) == (Action.QUEUE, "contradiction", True)


def test_without_a_verdict_the_pair_is_parked_unjudged() -> None:
    outcome = decide(PairFacts(side("old", rank=0), side("new", rank=0, days=1)), None, 0.0, GATES)
    assert (outcome.action, outcome.verdict) == (Action.QUEUE, "unjudged")


def test_equal_ages_are_broken_by_id_so_the_answer_is_stable() -> None:
    a, b = side("mem_1", rank=0), side("mem_2", rank=0)
    first = decide(PairFacts(a, b), Verdict.DUPLICATE, 1.0, GATES)
    swapped = decide(PairFacts(b, a), Verdict.DUPLICATE, 1.0, GATES)
    assert (first.loser, first.winner) == (swapped.loser, swapped.winner)


# -- properties --------------------------------------------------------------------------

sides = st.builds(
    Side,
    id=st.sampled_from(["x"]),
    kind=st.sampled_from(list(Kind)),
    rank=st.integers(0, 2),
    created_at=st.datetimes(min_value=datetime(2024, 1, 1), max_value=datetime(2026, 1, 1), timezones=st.just(UTC)),
)


@given(
    a=sides,
    b=sides,
    verdict=st.sampled_from(VERDICTS),
    confidence=st.floats(0.0, 1.0),
    allow_auto=st.booleans(),
)
def test_an_invalidation_never_hits_a_protected_side_and_below_the_gate_only_involves_a_provisional_one(
    a: Side, b: Side, verdict: Verdict | None, confidence: float, allow_auto: bool
) -> None:
    a, b = Side("a", a.kind, a.rank, a.created_at), Side("b", b.kind, b.rank, b.created_at)
    outcome = decide(PairFacts(a, b), verdict, confidence, GATES, allow_auto=allow_auto)
    if outcome.action is not Action.INVALIDATE:
        return
    assert allow_auto and verdict is not None
    assert {outcome.loser, outcome.winner} == {"a", "b"}
    loser = a if outcome.loser == "a" else b
    assert not is_protected(loser)
    if confidence < 0.9:
        assert loser.rank == 0
    if loser.rank != 0:
        # without a provisional side, only rules 6 and 7 act, each above its gate
        threshold = 0.9 if verdict is Verdict.DUPLICATE else 0.95
        assert confidence >= threshold


def test_a_restored_loser_is_queued_by_every_rule_that_would_retire_it() -> None:
    restored_old = side("old")
    restored_old = Side(restored_old.id, restored_old.kind, 0, restored_old.created_at, restored=True)
    for pair, verdict, confidence in [
        (PairFacts(restored_old, side("new", rank=0, days=1)), Verdict.CONTRADICTION, 0.1),  # rule 3
        (PairFacts(restored_old, side("new", rank=1, days=1)), Verdict.DUPLICATE, 0.99),  # rule 4
        (PairFacts(Side("old", Kind.FACT, 1, T0, restored=True), side("new", days=1)), Verdict.DUPLICATE, 1.0),
        (PairFacts(Side("old", Kind.FACT, 1, T0, restored=True), side("new", days=1)), Verdict.B_SUPERSEDES_A, 1.0),
    ]:
        outcome = decide(pair, verdict, confidence, GATES)
        assert outcome.action is Action.QUEUE and outcome.loser is None, (pair, verdict, outcome)


def test_a_restored_winner_does_not_stop_the_loser_from_going() -> None:
    pair = PairFacts(side("old"), Side("new", Kind.FACT, 1, T0 + timedelta(days=1), restored=True))
    outcome = decide(pair, Verdict.B_SUPERSEDES_A, 1.0, GATES)
    assert (outcome.action, outcome.loser, outcome.winner) == (Action.INVALIDATE, "old", "new")


@pytest.mark.parametrize("confidence", CONFIDENCES)
@pytest.mark.parametrize("verdict", VERDICTS, ids=[str(v) if v else "unjudged" for v in VERDICTS])
def test_a_retro_row_proposes_exactly_what_the_automatic_route_would_have_done(
    verdict: Verdict | None, confidence: float
) -> None:
    """``allow_auto=False`` queues; the row's proposal is the automatic outcome when that would have acted."""
    for rank_a, rank_b, kind_a, kind_b, a_is_newer in itertools.product(
        RANKS, RANKS, KIND_CHOICES, KIND_CHOICES, (True, False)
    ):
        pair = pair_of(rank_a, kind_a, rank_b, kind_b, a_is_newer)
        automatic = decide(pair, verdict, confidence, GATES)
        held = decide(pair, verdict, confidence, GATES, allow_auto=False)
        assert held.action is not Action.INVALIDATE
        assert held.proposed == (automatic if automatic.action is Action.INVALIDATE else None)
