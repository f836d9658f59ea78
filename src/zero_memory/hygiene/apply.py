"""Acting on a routed pair: each outcome in one transaction with its link and audit row.

The state is read again inside the transaction, so a pair that changed while
the judge was thinking (a side forgotten, a row raised by another process) is
left alone, and a loser restored or disputed meanwhile is queued, not
retired (``transitions.retire_automatically``, the guard of every automatic
retirement). Every automatic action records the verdict, confidence, rationale,
model and run id, and is undone by ``restore_memory``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from zero_memory import transitions
from zero_memory.domain.records import Dispute, DisputeShape, DisputeStatus, Judgement
from zero_memory.hygiene.candidates import Candidate
from zero_memory.hygiene.decide import Action, Outcome, held
from zero_memory.ids import new_id
from zero_memory.store import SYSTEM
from zero_memory.store.base import Tx


@dataclass(frozen=True, slots=True)
class Context:
    """Who acts and why: the pass, the run, the model and the verdict behind an outcome."""

    actor: str
    origin: str
    run_id: str | None
    at: datetime
    judgement: Judgement | None = None

    def evidence(self) -> dict[str, object]:
        if self.judgement is None:
            return {"verdict": "unjudged"}
        return {
            "verdict": self.judgement.verdict,
            "confidence": self.judgement.confidence,
            "rationale": self.judgement.rationale,
            "model": self.judgement.model,
        }


def act(tx: Tx, pair: Candidate, outcome: Outcome, ctx: Context) -> str:
    """Carry out an outcome; return what happened (a run-summary count name)."""
    current = tx.get_memories([pair.a.id, pair.b.id], SYSTEM)
    a, b = current.get(pair.a.id), current.get(pair.b.id)
    if a is None or b is None or not (a.live and b.live):
        return "skipped_dead"
    if tx.dispute_for_pair(pair.key) is not None:
        return "skipped_settled"
    if ctx.judgement is not None:
        tx.put_judgement(pair.key, ctx.judgement, ctx.at)
    if outcome.action is Action.NOTHING:
        return "judged"
    if outcome.action is Action.LINK:
        transitions.link(
            tx,
            a,
            b,
            "relates_to",
            actor=ctx.actor,
            at=ctx.at,
            action="hygiene.link",
            payload={"rule": outcome.rule, **ctx.evidence()},
            run_id=ctx.run_id,
        )
        return "linked_complementary"
    if outcome.action is Action.INVALIDATE:
        assert outcome.loser and outcome.winner and outcome.reason
        loser = current[outcome.loser]
        retired = transitions.retire_automatically(
            tx,
            loser,
            queued=queued(pair, held(outcome.rule, outcome.verdict), ctx),
            successor=outcome.winner,
            reason=outcome.reason,
            actor=ctx.actor,
            action="hygiene.auto_resolve",
            at=ctx.at,
            run_id=ctx.run_id,
            payload={"rule": outcome.rule, "origin": ctx.origin, **ctx.evidence()},
        )
        return "auto_resolved" if retired else "queued"
    raise_dispute(tx, pair, outcome, ctx)
    return "queued"


def proposal_of(proposed: Outcome | None) -> dict[str, object] | None:
    """What a queue row proposes: the automatic action the pass held back, as the row records it."""
    if proposed is None or not proposed.automatic:
        return None
    return {
        "action": "invalidate",
        "winner": proposed.winner,
        "loser": proposed.loser,
        "reason": proposed.reason.value if proposed.reason else None,
        "rule": proposed.rule,
    }


def queued(pair: Candidate, outcome: Outcome, ctx: Context) -> transitions.Queued:
    """The review-queue row of a queued outcome, with what its audit row records."""
    judgement = ctx.judgement
    dispute = Dispute(
        id=new_id("dsp"),
        owner=pair.a.owner,
        shape=DisputeShape.PAIR,
        verdict=outcome.verdict or "unjudged",
        direction=outcome.direction,
        confidence=judgement.confidence if judgement else None,
        rationale=judgement.rationale if judgement else None,
        model=judgement.model if judgement else None,
        origin=ctx.origin,
        status=DisputeStatus.PENDING,
        memory_a=pair.a.id,
        memory_b=pair.b.id,
        pair_key=pair.key,
        run_id=ctx.run_id,
        created_at=ctx.at,
        proposal=proposal_of(outcome.proposed),
    )
    payload = {
        "rule": outcome.rule,
        "direction": outcome.direction,
        **({"proposal": dispute.proposal} if dispute.proposal else {}),
        **ctx.evidence(),
    }
    return transitions.Queued(dispute, payload, contradicts=outcome.contradicts_link)


def raise_dispute(tx: Tx, pair: Candidate, outcome: Outcome, ctx: Context) -> Dispute:
    row = queued(pair, outcome, ctx)
    dispute, _ = transitions.raise_dispute(
        tx, row.dispute, actor=ctx.actor, at=ctx.at, payload=row.payload, contradicts=row.contradicts
    )
    return dispute
