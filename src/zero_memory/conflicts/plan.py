"""Settling a review-queue row, decided: a pure function of the row, its memories, a choice (docs/spec/hygiene.md §4).

A pair: ``keep_both``; ``winner`` (the other side is invalidated, superseded
by the winner); ``forget`` one side; ``merge`` (a new memory with the composed
text supersedes both). A single-subject row: uphold (``keep_both``, or
``winner`` naming its memory) or ``retire`` (an invalidation with no
successor). A side that is already gone is not invalidated again, and a
winner that is gone is refused: keeping it would leave the pair with nothing.

``plan`` reads no store and no clock, so every row shape × choice × liveness
× permission is table-tested without a database (tests/conflicts); ``apply``
carries a plan out in one write transaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, assert_never

from zero_memory import errors
from zero_memory.conflicts.choice import Accept, Choice, Forget, KeepBoth, Merge, Retire, Winner
from zero_memory.domain.memory import AuthorKind, InvalidationReason, Memory, Rank, content_hash
from zero_memory.domain.records import Dispute, DisputeShape

SINGLE_CHOICES = "a single-subject dispute is settled by keep_both, winner (its memory) or retire"


@dataclass(frozen=True, slots=True)
class Context:
    """Who settles and when: the scopes they may write and how a memory they compose by merging is signed.

    ``merged_id`` is the id a merge gives its new memory, minted by the caller
    so that the plan stays a function of its inputs.
    """

    actor: str
    writable: frozenset[str]
    author_kind: AuthorKind
    agent_name: str
    rank: Rank
    at: datetime
    merged_id: str


@dataclass(frozen=True, slots=True)
class Retirement:
    """One memory to invalidate: the reason it keeps, its successor (if any) and the audit action naming the step."""

    memory: Memory
    reason: InvalidationReason
    action: str
    successor: str | None = None


@dataclass(frozen=True, slots=True)
class Plan:
    """Everything one settlement changes: a merged memory to create first (the retirements name it), the
    memories to invalidate, and the resolution recorded on the row and in its ``queue.resolve`` audit row."""

    dispute: Dispute
    actor: str
    at: datetime
    resolution: dict[str, Any]
    retirements: tuple[Retirement, ...] = ()
    merged: Memory | None = None
    # Who settled (``AuthorKind``): only a person's settlement spends the misled signals before it (§11).
    settled_by: str = AuthorKind.HUMAN.value

    @property
    def invalidated(self) -> list[str]:
        return [retirement.memory.id for retirement in self.retirements]


def plan(dispute: Dispute, memories: Mapping[str, Memory], choice: Choice, ctx: Context) -> Plan:
    """The settlement of ``dispute`` by ``choice``, or the ``ZMError`` that refuses it (and changes nothing)."""
    if not dispute.pending:
        raise errors.conflict(f"dispute {dispute.id} is {dispute.status.value}", subcode=errors.ALREADY_RESOLVED)
    for memory in memories.values():
        if memory.scope not in ctx.writable:
            raise errors.validation(f"dispute_id: {memory.id} is in {memory.scope}, which is read-only for you")
    if isinstance(choice, Accept):
        choice = _accepted(dispute)
    by = ctx.author_kind.value
    if dispute.shape is DisputeShape.SINGLE:
        resolution, retirements = _single(dispute, memories[dispute.memory_a], choice)
        return Plan(dispute, ctx.actor, ctx.at, resolution, retirements, settled_by=by)
    a, b = memories[dispute.memory_a], memories[dispute.memory_b or ""]
    if isinstance(choice, Merge):
        merged = _merged(a, b, choice.text, ctx)
        retirements = _if_live((a, b), InvalidationReason.MERGED, "merge.retire", successor=merged.id)
        return Plan(dispute, ctx.actor, ctx.at, {"merge": merged.id}, retirements, merged, settled_by=by)
    resolution, retirements = _pair(dispute, a, b, choice)
    return Plan(dispute, ctx.actor, ctx.at, resolution, retirements, settled_by=by)


def _accepted(dispute: Dispute) -> Winner:
    """Accepting a row's proposal is choosing its winner: the loser is invalidated, superseded by it."""
    winner = (dispute.proposal or {}).get("winner")
    if not isinstance(winner, str):
        raise errors.validation("accept: this row carries no proposal; choose keep_both, winner, forget or merge")
    return Winner(winner)


def _single(dispute: Dispute, subject: Memory, choice: Choice) -> tuple[dict[str, Any], tuple[Retirement, ...]]:
    match choice:
        case Retire():
            return {"retire": True}, _if_live((subject,), InvalidationReason.RETIRED, "retire")
        case KeepBoth():
            return {"uphold": True}, ()
        case Winner(memory_id) if memory_id == subject.id:
            return {"uphold": True}, ()
    raise errors.validation(SINGLE_CHOICES)


def _pair(
    dispute: Dispute, a: Memory, b: Memory, choice: KeepBoth | Winner | Forget | Retire
) -> tuple[dict[str, Any], tuple[Retirement, ...]]:
    match choice:
        case Retire():
            raise errors.validation("retire: settles single-subject disputes; for a pair choose winner or forget")
        case KeepBoth():
            return {"keep_both": True}, ()
        case Winner(target) | Forget(target) if target not in (a.id, b.id):
            # One wording for both: the id must name a side, whichever field carried it.
            raise errors.validation("winner: must be one of the dispute's two memories")
        case Winner(target):
            winner, loser = (a, b) if target == a.id else (b, a)
            if not winner.live:
                raise errors.conflict(f"{winner.id} is not live; restore it first")
            reason = InvalidationReason.DUPLICATE if dispute.verdict == "duplicate" else InvalidationReason.SUPERSEDED
            return {"winner": winner.id}, _if_live((loser,), reason, "resolve.winner", successor=winner.id)
        case Forget(target):
            gone = a if target == a.id else b
            return {"forget": gone.id}, _if_live((gone,), InvalidationReason.FORGOTTEN, "forget")
        case _:
            assert_never(choice)


def _if_live(
    memories: tuple[Memory, ...], reason: InvalidationReason, action: str, *, successor: str | None = None
) -> tuple[Retirement, ...]:
    """Retirements of the memories still live: one already gone keeps the reason and successor it has."""
    return tuple(Retirement(m, reason, action, successor) for m in memories if m.live)


def _merged(a: Memory, b: Memory, text: str, ctx: Context) -> Memory:
    """The composed memory: where the newer side lives (owner, scope, kind), signed by whoever typed it."""
    newer = max((a, b), key=lambda m: (m.created_at, m.id))
    return Memory(
        id=ctx.merged_id,
        owner=newer.owner,
        scope=newer.scope,
        kind=newer.kind,
        content=text,
        content_hash=content_hash(text),
        author_kind=ctx.author_kind,
        agent_name=ctx.agent_name,
        rank=ctx.rank,
        source={"merged_from": f"{a.id},{b.id}"},
        created_at=ctx.at,
        updated_at=ctx.at,
    )
