"""The portability audit (docs/spec/hygiene.md §10) and its proposals.

Live project-scope memories of kind fact, reference or gotcha, most used first,
capped per run, each a candidate once ever. The portability judge must say
portable with confidence at or above ``portable_min_confidence`` to file
a pending proposal; otherwise the candidacy closes. Only the owner's approval
moves the memory to ``user.<uid>.core`` (reversibly: the original scope stays
on record); a dismissal is terminal.

A memory other people can see where it stands (a team scope, or a project with
members besides its author) is never proposed, and its approval is refused:
in one user's core it would vanish from their recall. The approval checks again
because members may have joined since the proposal; a refused approval changes
nothing, so the proposal stays pending for the owner to dismiss (or to approve
once the others have left).
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import timedelta
from typing import Literal

from pydantic import BaseModel

from zero_memory import errors, transitions
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.clock import to_text
from zero_memory.domain import scopes
from zero_memory.domain.memory import Kind, Memory, age_days
from zero_memory.domain.records import PortabilityCandidate
from zero_memory.hygiene.runs import Tally
from zero_memory.ids import new_id
from zero_memory.judge.owners import judge_for
from zero_memory.judge.questions.portability import audit
from zero_memory.store import SYSTEM, system_tx

AUDITED_KINDS = (Kind.FACT.value, Kind.REFERENCE.value, Kind.GOTCHA.value)
USAGE_WINDOW_DAYS = 90


class PortabilityMemory(BaseModel):
    id: str
    content: str
    kind: Kind
    scope: str
    age_days: float


class Proposal(BaseModel):
    id: str
    status: str
    confidence: float | None
    rationale: str | None
    model: str | None
    original_scope: str
    created_at: str
    memory: PortabilityMemory | None


class ProposalList(BaseModel):
    proposals: list[Proposal]
    pending_count: int


class PortabilityResolution(BaseModel):
    candidate_id: str
    status: Literal["approved", "dismissed"]
    memory_id: str
    scope: str


def seen_by_others(memory: Memory, members: Collection[str]) -> bool:
    """Whether people besides its author can see the memory where it stands: anyone in a team scope, or
    a member of its project other than the author. ``members``: the user ids with a role on its scope."""
    if scopes.parse(memory.scope).kind is scopes.ScopeKind.TEAM:
        return True
    return any(uid != memory.owner for uid in members)


def audit_candidates(app: App, owner: str, limit: int) -> list[Memory]:
    """Project memories of the audited kinds never proposed before and seen by nobody else, most surfaced
    first. Team scopes are not audited at all, and shared projects are skipped (not closed): a project
    its other members have left is audited again."""
    with system_tx(app.store, "hygiene") as tx:
        pool = tx.live_memories(owner=owner, kinds=AUDITED_KINDS, scope_prefix="proj.", limit=5000)
        seen = tx.portability_of([m.id for m in pool])
        usage = tx.surfacings_of([m.id for m in pool], since=app.clock() - timedelta(days=USAGE_WINDOW_DAYS))
        members = {scope: [m.user_id for m in tx.members_of(scope)] for scope in {m.scope for m in pool}}
    fresh = [m for m in pool if m.id not in seen and not seen_by_others(m, members[m.scope])]
    fresh.sort(key=lambda m: (-usage.get(m.id, 0), m.created_at, m.id))
    return fresh[:limit]


def step(app: App, owner: str, tally: Tally, run_id: str | None, dry_run: bool) -> None:
    judge = judge_for(app.judge_factory, owner, run_id)
    if judge.offer_mode:
        return
    config = app.settings.hygiene
    for memory in audit_candidates(app, owner, config.portability_max_per_run):
        verdict = audit(judge, memory, app.clock())
        if verdict is None:
            tally.add("failed_judgements")
            continue
        portable, confidence, rationale = verdict
        proposed = portable and confidence >= config.portable_min_confidence
        if dry_run:
            tally.add("portability_proposed", int(proposed))
            continue
        now = app.clock()
        candidate = PortabilityCandidate(
            id=new_id("prt"),
            memory_id=memory.id,
            owner=owner,
            status="pending" if proposed else "closed",
            original_scope=memory.scope,
            created_at=now,
            confidence=confidence,
            rationale=rationale,
            model=app.settings.hygiene_model,
            run_id=run_id,
        )
        with system_tx(app.store, "hygiene", write=True) as tx:
            if not transitions.propose_portability(tx, candidate, portable=portable):
                continue
        if proposed:
            tally.add("portability_proposed")


def _view(candidate: PortabilityCandidate, memory: Memory | None, app: App) -> Proposal:
    return Proposal(
        id=candidate.id,
        status=candidate.status,
        confidence=candidate.confidence,
        rationale=candidate.rationale,
        model=candidate.model,
        original_scope=candidate.original_scope,
        created_at=to_text(candidate.created_at),
        memory=PortabilityMemory(
            id=memory.id,
            content=memory.content,
            kind=memory.kind,
            scope=memory.scope,
            age_days=round(age_days(memory.created_at, app.clock()), 3),
        )
        if memory
        else None,
    )


def list_portability(app: App, caller: Caller, status: str | None = "pending") -> ProposalList:
    if status not in (None, "pending", "approved", "dismissed", "closed"):
        raise errors.validation("status: expected pending, approved, dismissed or closed")
    with app.store.tx() as tx:
        tx.act_as(caller.uid)
        found = tx.list_portability(owner=caller.uid, status=status)
        memories = tx.get_memories([c.memory_id for c in found], SYSTEM)
        pending = len(tx.list_portability(owner=caller.uid, status="pending", limit=10_000))
    return ProposalList(proposals=[_view(c, memories.get(c.memory_id), app) for c in found], pending_count=pending)


def _where_it_stands(app: App, candidate_id: str) -> tuple[str, list[str]] | None:
    """The scope of the proposed memory and everyone with a role on it. A system read: on PostgreSQL the
    owner's own transaction sees only their own membership rows."""
    with system_tx(app.store, "portability") as tx:
        candidate = tx.get_portability(candidate_id)
        memory = tx.get_memory(candidate.memory_id, SYSTEM) if candidate else None
        if memory is None:
            return None
        return memory.scope, [m.user_id for m in tx.members_of(memory.scope)]


def _refuse_if_seen_by_others(memory: Memory, checked: tuple[str, list[str]] | None) -> None:
    if checked is None or checked[0] != memory.scope:
        raise errors.conflict("the memory moved while the proposal was being approved; try again")
    if not seen_by_others(memory, checked[1]):
        return
    if scopes.parse(memory.scope).kind is scopes.ScopeKind.TEAM:
        raise errors.conflict(
            f"the memory is in the team scope {memory.scope}; moving it to your core would take it from "
            "your teammates. Dismiss the proposal, or write the portable part to core with remember"
        )
    raise errors.conflict(
        f"the memory is in the project {memory.scope}, which other members read; moving it to your core would "
        "take it from them. Dismiss the proposal, or write the portable part to core with remember"
    )


def resolve_portability(app: App, caller: Caller, candidate_id: str, approve: bool) -> PortabilityResolution:
    now = app.clock()
    checked = _where_it_stands(app, candidate_id) if approve else None
    with app.store.tx(write=True) as tx:
        tx.act_as(caller.uid)
        candidate = tx.get_portability(candidate_id)
        if candidate is None or candidate.owner != caller.uid:
            raise errors.not_found(f"portability candidate {candidate_id[:80]}")
        if candidate.status != "pending":
            raise errors.conflict(f"the proposal is {candidate.status}", subcode=errors.ALREADY_RESOLVED)
        memory = tx.get_memory(candidate.memory_id, SYSTEM)
        if memory is None:
            raise errors.not_found(f"memory {candidate.memory_id}")
        if approve:
            if not memory.live:
                raise errors.conflict("the memory is no longer live; restore it first")
            _refuse_if_seen_by_others(memory, checked)
        transitions.settle_portability(
            tx, candidate, memory, target=scopes.core(caller.uid) if approve else None, actor=caller.uid, at=now
        )
    return PortabilityResolution(
        candidate_id=candidate.id,
        status="approved" if approve else "dismissed",
        memory_id=memory.id,
        scope=scopes.core(caller.uid) if approve else memory.scope,
    )
