"""Loop closure, a stage of the full cycle: open loops that later work has closed, closed reversibly.

For each open loop of the owner (oldest first), the newer live memories of
the same owner in the same scope above ``loop_closure_similarity`` are its
evidence candidates (other open loops are not evidence). The loop-closure
judge asks of each, most similar first: does it show the task done or the
question answered? At ``loop_close_confidence`` or above the loop is closed
in the run (``transitions.close_loop`` with the evidence linked), and
``zm hygiene undo`` of the run reopens it; below, nothing happens.

- Capped: at most ``loop_closure_max_per_run`` judge calls a run.
- Cached per (loop, evidence, model) in the judgement cache: a stable store
  spends nothing on pairs already asked. A failed call caches nothing.
- Attributed to the loop's owner (``judge_for``), purpose ``loop_closure``.
- Skipped in offer mode; never write-triggered.
- A loop that was ever reopened (restored, by a person or by an undo), or
  that has a pending review-queue row, is never closed automatically: the
  guard of every automatic retirement (``transitions.close_loop_automatically``)
  leaves it open. Reopened loops are not even asked about.
"""

from __future__ import annotations

from dataclasses import dataclass

from zero_memory import transitions
from zero_memory.app import App
from zero_memory.domain.memory import OPEN_LOOP_KINDS, Memory
from zero_memory.domain.records import Judgement
from zero_memory.hygiene.runs import Tally
from zero_memory.judge.owners import judge_for
from zero_memory.judge.questions.loop_closure import ask, request_for
from zero_memory.store import SYSTEM, system_tx

ACTOR = "hygiene.loop_closure"
CLOSED, OPEN = "closed", "open"
LOOPS_PER_RUN = 1_000


def cache_key(loop_id: str, evidence_id: str) -> str:
    """The judgement-cache key of a (loop, evidence) question; never the key of a pair of memories."""
    return f"loop_closure:{loop_id}>{evidence_id}"


def closes(closed: bool, confidence: float, floor: float) -> bool:
    """The decision: only a confident "closed" closes a loop."""
    return closed and confidence >= floor


@dataclass(frozen=True, slots=True)
class Found:
    loop: Memory
    evidence: list[Memory]


def candidates(app: App, owner: str) -> list[Found]:
    """Open loops never reopened and not under review, each with its newer, similar, same-scope evidence, most
    similar first."""
    config = app.settings.hygiene
    kinds = [k.value for k in OPEN_LOOP_KINDS]
    found: list[Found] = []
    with system_tx(app.store, "hygiene") as tx:
        for loop in tx.live_memories(owner=owner, kinds=kinds, limit=LOOPS_PER_RUN):
            vector = tx.memory_vector(loop.id)
            if vector is None or transitions.held_back(tx, loop):
                # The judge is not asked about a loop the guard would keep open anyway (a dry run would count
                # it closed): restored by a person, or with a row a person is deciding.
                continue
            near = tx.similar(
                vector,
                floor=config.loop_closure_similarity,
                limit=config.loop_closure_max_candidates * 4,
                scopes=[loop.scope],
                owner=owner,
                exclude=[loop.id],
            )
            evidence = [
                n.memory
                for n in near
                if n.memory.live
                and n.memory.owner == owner
                and n.memory.kind not in OPEN_LOOP_KINDS
                and (n.memory.created_at, n.memory.id) > (loop.created_at, loop.id)
            ][: config.loop_closure_max_candidates]
            if evidence:
                found.append(Found(loop, evidence))
    return found


def step(app: App, owner: str, tally: Tally, run_id: str | None, dry_run: bool) -> None:
    judge = judge_for(app.judge_factory, owner, run_id)
    if judge.offer_mode:
        return
    config = app.settings.hygiene
    calls = 0
    for found in candidates(app, owner):
        for evidence in found.evidence:
            now = app.clock()
            request = request_for(found.loop, evidence, now)
            model = judge.model_for(request)
            key = cache_key(found.loop.id, evidence.id)
            with system_tx(app.store, "hygiene") as tx:
                if tx.get_judgement(key, model) is not None:
                    tally.add("skipped_cached")
                    continue
            if calls >= config.loop_closure_max_per_run:
                tally.notes.append(f"loop closure stopped at its cap of {config.loop_closure_max_per_run} judgements")
                return
            calls += 1
            answer = ask(judge, request)
            if answer is None:
                tally.add("failed_judgements")
                tally.notes.append(f"{key}: no valid verdict")
                continue
            tally.add("judged")
            closed, confidence, rationale = answer
            if dry_run:
                if closes(closed, confidence, config.loop_close_confidence):
                    tally.add("loops_closed")
                    break
                continue
            judgement = Judgement(CLOSED if closed else OPEN, confidence, rationale, model)
            if _record(app, found.loop, evidence, judgement, run_id, config.loop_close_confidence):
                tally.add("loops_closed")
                break


def _record(app: App, loop: Memory, evidence: Memory, judgement: Judgement, run_id: str | None, floor: float) -> bool:
    """Cache the judgement; close the loop when it says so confidently and the loop is still open. True if closed."""
    now = app.clock()
    with system_tx(app.store, "hygiene", write=True) as tx:
        tx.put_judgement(cache_key(loop.id, evidence.id), judgement, now)
        if not closes(judgement.verdict == CLOSED, judgement.confidence, floor):
            return False
        current = tx.get_memory(loop.id, SYSTEM)
        if current is None or not current.live:
            return False
        return transitions.close_loop_automatically(
            tx,
            current,
            actor=ACTOR,
            at=now,
            run_id=run_id,
            evidence=evidence,
            payload={
                "verdict": judgement.verdict,
                "confidence": judgement.confidence,
                "rationale": judgement.rationale,
                "model": judgement.model,
            },
        )
