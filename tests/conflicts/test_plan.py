"""Settling a review-queue row (docs/spec/hygiene.md §4), checked exhaustively against an oracle written from the spec.

The oracle below follows the spec's list, and not ``plan``'s code: every row
status × shape and verdict × choice × whether each side is live × which sides
the caller may write × which side is newer.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from zero_memory import errors
from zero_memory.conflicts.choice import Accept, Choice, Forget, KeepBoth, Merge, Retire, Winner
from zero_memory.conflicts.plan import Context, Plan, plan
from zero_memory.domain.memory import AuthorKind, InvalidationReason, Kind, Memory, Rank, Status
from zero_memory.domain.records import Dispute, DisputeShape, DisputeStatus

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
NOW = T0 + timedelta(days=30)
A, B, OUTSIDE, NEW = "mem_a", "mem_b", "mem_outside", "mem_new"
SCOPE_A, SCOPE_B = "user.alice", "proj.alice.billing"
TEXT = "The staging database is teal since the March move"

PAIR_VERDICTS = ("duplicate", "supersedes", "contradiction", "unjudged")
SINGLE_VERDICTS = ("challenged", "stale_suspect", "outdated")
STATUSES = tuple(DisputeStatus)
CHOICES: tuple[Choice, ...] = (
    KeepBoth(),
    Winner(A),
    Winner(B),
    Winner(OUTSIDE),
    Forget(A),
    Forget(B),
    Forget(OUTSIDE),
    Merge(TEXT),
    Retire(),
)
LIVENESS = tuple(itertools.product((True, False), repeat=2))
WRITABLE = (frozenset({SCOPE_A, SCOPE_B}), frozenset({SCOPE_A}), frozenset({SCOPE_B}), frozenset())
NEWER = ("a", "b", "same time")  # with the same time, the larger id counts as newer: B


@dataclass(frozen=True)
class Expected:
    """What a settlement does, in the spec's terms; ``error`` when it is refused."""

    error: str | None = None
    resolution: tuple[tuple[str, Any], ...] = ()
    retired: tuple[tuple[str, str, str | None, str], ...] = ()  # (memory, reason, successor, audit action)
    merged: tuple[str, str, Kind, str, str] | None = None  # (owner, scope, kind, content, merged_from)


def side(mid: str, scope: str, live: bool, created_at: datetime, kind: Kind) -> Memory:
    return Memory(
        id=mid,
        owner="alice",
        scope=scope,
        kind=kind,
        content=f"content of {mid}",
        author_kind=AuthorKind.AGENT,
        agent_name="test",
        rank=Rank.AGENT,
        source={},
        created_at=created_at,
        updated_at=created_at,
        status=Status.LIVE if live else Status.INVALIDATED,
        invalidated_reason=None if live else InvalidationReason.FORGOTTEN,
    )


def row(shape: DisputeShape, verdict: str, status: DisputeStatus) -> Dispute:
    return Dispute(
        id="dsp_1",
        owner="alice",
        shape=shape,
        verdict=verdict,
        origin="scan",
        status=status,
        memory_a=A,
        memory_b=B if shape is DisputeShape.PAIR else None,
        created_at=T0,
    )


def memories_of(shape: DisputeShape, a_live: bool, b_live: bool, newer: str) -> dict[str, Memory]:
    a_at = T0 + timedelta(days=2 if newer == "a" else 1)
    b_at = T0 + timedelta(days=2 if newer == "b" else 1)
    a = side(A, SCOPE_A, a_live, a_at, Kind.DECISION)
    if shape is DisputeShape.SINGLE:
        return {A: a}
    return {A: a, B: side(B, SCOPE_B, b_live, b_at, Kind.FACT)}


def context(writable: frozenset[str], *, human: bool = False) -> Context:
    return Context(
        actor="alice",
        writable=writable,
        author_kind=AuthorKind.HUMAN if human else AuthorKind.AGENT,
        agent_name="dashboard" if human else "test-client",
        rank=Rank.HUMAN if human else Rank.AGENT,
        at=NOW,
        merged_id=NEW,
    )


def oracle(dispute: Dispute, memories: dict[str, Memory], choice: Choice, writable: frozenset[str]) -> Expected:
    """docs/spec/hygiene.md §4, read as a list of refusals and then one settlement per shape."""
    if dispute.status is not DisputeStatus.PENDING:
        return Expected(f"conflict: already_resolved: dispute dsp_1 is {dispute.status.value}")
    for memory in memories.values():  # A first, then B
        if memory.scope not in writable:
            return Expected(
                f"validation_failed: dispute_id: {memory.id} is in {memory.scope}, which is read-only for you"
            )
    a = memories[A]

    def retired(
        m: Memory, reason: str, successor: str | None, action: str
    ) -> tuple[tuple[str, str, str | None, str], ...]:
        return ((m.id, reason, successor, action),) if m.live else ()  # a side already gone stays as it is

    if dispute.shape is DisputeShape.SINGLE:
        # uphold (keep_both, or winner naming its memory), or retire: reversible, no successor
        if choice == KeepBoth() or choice == Winner(A):
            return Expected(resolution=(("uphold", True),))
        if choice == Retire():
            return Expected(resolution=(("retire", True),), retired=retired(a, "retired", None, "retire"))
        return Expected(
            "validation_failed: a single-subject dispute is settled by keep_both, winner (its memory) or retire"
        )
    b = memories[B]
    if choice == Retire():
        return Expected(
            "validation_failed: retire: settles single-subject disputes; for a pair choose winner or forget"
        )
    if choice == KeepBoth():
        return Expected(resolution=(("keep_both", True),))
    if choice in (Winner(OUTSIDE), Forget(OUTSIDE)):
        return Expected("validation_failed: winner: must be one of the dispute's two memories")
    if isinstance(choice, Winner):
        # the other side is invalidated, superseded by the winner; a winner that is gone cannot be kept
        winner, loser = (a, b) if choice.memory_id == A else (b, a)
        if not winner.live:
            return Expected(f"conflict: {winner.id} is not live; restore it first")
        reason = "duplicate" if dispute.verdict == "duplicate" else "superseded"
        return Expected(
            resolution=(("winner", winner.id),), retired=retired(loser, reason, winner.id, "resolve.winner")
        )
    if isinstance(choice, Forget):
        gone = a if choice.memory_id == A else b
        return Expected(resolution=(("forget", gone.id),), retired=retired(gone, "forgotten", None, "forget"))
    assert isinstance(choice, Merge)
    # a new memory with the composed text supersedes both; it lives where the newer side lives
    newer = a if (a.created_at, a.id) > (b.created_at, b.id) else b
    return Expected(
        resolution=(("merge", NEW),),
        retired=retired(a, "merged", NEW, "merge.retire") + retired(b, "merged", NEW, "merge.retire"),
        merged=(newer.owner, newer.scope, newer.kind, TEXT, f"{A},{B}"),
    )


def observed(dispute: Dispute, memories: dict[str, Memory], choice: Choice, writable: frozenset[str]) -> Expected:
    try:
        got = plan(dispute, memories, choice, context(writable))
    except errors.ZMError as error:
        return Expected(str(error))
    merged = got.merged
    return Expected(
        resolution=tuple(got.resolution.items()),
        retired=tuple((r.memory.id, r.reason.value, r.successor, r.action) for r in got.retirements),
        merged=(merged.owner, merged.scope, merged.kind, merged.content, merged.source["merged_from"])
        if merged
        else None,
    )


SHAPES = [(DisputeShape.PAIR, v) for v in PAIR_VERDICTS] + [(DisputeShape.SINGLE, v) for v in SINGLE_VERDICTS]


@pytest.mark.parametrize("status", STATUSES)
@pytest.mark.parametrize(("shape", "verdict"), SHAPES, ids=[f"{s.value}-{v}" for s, v in SHAPES])
def test_every_settlement_follows_the_spec(shape: DisputeShape, verdict: str, status: DisputeStatus) -> None:
    wrong = []
    for choice, (a_live, b_live), writable, newer in itertools.product(CHOICES, LIVENESS, WRITABLE, NEWER):
        dispute, memories = row(shape, verdict, status), memories_of(shape, a_live, b_live, newer)
        expected = oracle(dispute, memories, choice, writable)
        got = observed(dispute, memories, choice, writable)
        if got != expected:
            wrong.append(
                f"{choice} A {'live' if a_live else 'gone'} B {'live' if b_live else 'gone'} "
                f"writable {sorted(writable)} newer {newer}: expected {expected}, got {got}"
            )
    assert not wrong, "\n".join(wrong)


def test_the_table_covers_every_case_and_each_outcome_happens() -> None:
    """9 choices × 4 liveness × 4 permissions × 3 ages, for 7 row kinds × 3 statuses; every branch is reached."""
    cases = list(itertools.product(SHAPES, STATUSES, CHOICES, LIVENESS, WRITABLE, NEWER))
    assert len(cases) == 7 * 3 * 9 * 4 * 4 * 3 == 9072
    outcomes = set()
    for (shape, verdict), status, choice, (a_live, b_live), writable, newer in cases:
        got = observed(row(shape, verdict, status), memories_of(shape, a_live, b_live, newer), choice, writable)
        outcomes.add(
            got.error.split(" ")[0] + (got.error.split(" ")[1] if "already" in got.error else "")
            if got.error
            else (got.resolution[0][0], len(got.retired))
        )
    assert outcomes >= {
        "conflict:already_resolved:",
        "validation_failed:",
        "conflict:",
        ("keep_both", 0),
        ("uphold", 0),
        ("retire", 0),
        ("retire", 1),
        ("winner", 0),
        ("winner", 1),
        ("forget", 0),
        ("forget", 1),
        ("merge", 0),
        ("merge", 1),
        ("merge", 2),
    }


# -- a few rows spelled out ------------------------------------------------------------


def pair(
    *, verdict: str = "duplicate", a_live: bool = True, b_live: bool = True, newer: str = "b"
) -> tuple[Dispute, dict[str, Memory]]:
    return row(DisputeShape.PAIR, verdict, DisputeStatus.PENDING), memories_of(DisputeShape.PAIR, a_live, b_live, newer)


BOTH = frozenset({SCOPE_A, SCOPE_B})


def test_a_winner_supersedes_the_other_side_as_a_duplicate_or_as_superseded_by_verdict() -> None:
    for verdict, reason in (("duplicate", "duplicate"), ("supersedes", "superseded"), ("unjudged", "superseded")):
        dispute, memories = pair(verdict=verdict)
        got = plan(dispute, memories, Winner(B), context(BOTH))
        (retirement,) = got.retirements
        assert (retirement.memory.id, retirement.reason.value, retirement.successor) == (A, reason, B)
        assert got.invalidated == [A]


def test_accepting_a_proposal_is_choosing_its_winner_and_a_row_without_one_refuses_it() -> None:
    dispute, memories = pair(verdict="duplicate")
    proposed = replace(dispute, proposal={"action": "invalidate", "winner": B, "loser": A, "reason": "duplicate"})
    accepted = plan(proposed, memories, Accept(), context(BOTH))
    assert accepted == plan(proposed, memories, Winner(B), context(BOTH))
    with pytest.raises(errors.ZMError) as refused:
        plan(dispute, memories, Accept(), context(BOTH))
    assert str(refused.value).startswith("validation_failed: accept:")


def test_a_merged_memory_typed_by_a_person_is_human_authored_at_rank_2_and_lives_where_the_newer_side_lives() -> None:
    dispute, memories = pair(newer="a")
    got = plan(dispute, memories, Merge(TEXT), context(BOTH, human=True))
    merged = got.merged
    assert merged is not None
    assert (merged.id, merged.author_kind, merged.agent_name, merged.rank) == (
        NEW,
        AuthorKind.HUMAN,
        "dashboard",
        Rank.HUMAN,
    )
    assert (merged.scope, merged.kind, merged.created_at, merged.status) == (SCOPE_A, Kind.DECISION, NOW, Status.LIVE)
    assert merged.content_hash and merged.source == {"merged_from": f"{A},{B}"}
    assert [(r.memory.id, r.successor) for r in got.retirements] == [(A, NEW), (B, NEW)]


def test_an_agent_merge_is_signed_by_its_client_at_rank_1() -> None:
    dispute, memories = pair()
    merged = plan(dispute, memories, Merge(TEXT), context(BOTH)).merged
    assert merged is not None
    assert (merged.author_kind, merged.agent_name, merged.rank) == (AuthorKind.AGENT, "test-client", Rank.AGENT)


def test_keeping_a_winner_that_is_already_gone_is_refused_and_a_gone_loser_is_left_as_it_is() -> None:
    dispute, memories = pair(a_live=False)
    with pytest.raises(errors.ZMError, match=r"^conflict: mem_a is not live; restore it first$"):
        plan(dispute, memories, Winner(A), context(BOTH))
    got = plan(dispute, memories, Winner(B), context(BOTH))
    assert (got.resolution, got.retirements) == ({"winner": B}, ())


def test_a_settled_row_is_refused_before_anything_else_is_looked_at() -> None:
    dispute = row(DisputeShape.PAIR, "duplicate", DisputeStatus.DISMISSED)
    memories = memories_of(DisputeShape.PAIR, True, True, "b")
    with pytest.raises(errors.ZMError, match=r"^conflict: already_resolved: dispute dsp_1 is dismissed$"):
        plan(dispute, memories, Retire(), context(frozenset()))


def test_the_plan_is_a_value_the_same_inputs_always_give() -> None:
    dispute, memories = pair()
    first, second = (plan(dispute, memories, Merge(TEXT), context(BOTH)) for _ in range(2))
    assert first == second and isinstance(first, Plan)
