"""Queue self-healing (docs/spec/hygiene.md §6): loss-free, it dismisses a row as keep-both or leaves it.

- The stale sweep (no model, every full cycle) dismisses pending pair rows one
  of whose sides is no longer live, or whose sides the cross-project
  predicate now places in different projects (after a move): the question is
  moot, and the row is dismissed without asking a judge.
- The re-judge pass (model, on demand only) asks the current judge again about
  still-live pending pairs and dismisses those it now calls complementary or
  unrelated. Neither ever invalidates a memory; every dismissal is audited.
"""

from __future__ import annotations

from collections.abc import Mapping

from zero_memory import transitions
from zero_memory.access.project_identity import different_projects, project_identity, project_paths
from zero_memory.app import App
from zero_memory.domain.memory import Memory
from zero_memory.domain.records import Dispute, DisputeShape
from zero_memory.domain.verdicts import Verdict
from zero_memory.hygiene.runs import Tally
from zero_memory.judge.base import Judged, JudgeFailure
from zero_memory.judge.owners import judge_for
from zero_memory.judge.prompt import JudgedMemory
from zero_memory.judge.question import Purpose
from zero_memory.judge.questions.pair import PairRequest
from zero_memory.store import SYSTEM, system_tx
from zero_memory.store.base import Tx
from zero_memory.store.ports.review import DisputeQuery

KEEP_VERDICTS = frozenset({Verdict.COMPLEMENTARY, Verdict.UNRELATED})
PAGE = 200


def pending_pairs(tx: Tx, owner: str) -> list[Dispute]:
    rows: list[Dispute] = []
    after = None
    while True:
        page = tx.list_disputes(DisputeQuery(owner=owner, shape=DisputeShape.PAIR.value, limit=PAGE, after=after))
        rows += page
        if len(page) < PAGE:
            return rows
        after = page[-1].id


def moot(dispute: Dispute, sides: Mapping[str, Memory], paths: Mapping[str, str]) -> dict[str, object] | None:
    """Why a pending pair row no longer asks a question (a side is gone, or the sides are in different
    projects now), or None while it still does."""
    dead = [i for i in (dispute.memory_a, dispute.memory_b) if i and (i not in sides or not sides[i].live)]
    if dead:
        return {"stale": True, "reason": "not_live", "not_live": dead}
    a, b = sides[dispute.memory_a], sides[dispute.memory_b or dispute.memory_a]
    if different_projects(a, b, paths):
        identities = {m.id: ":".join(project_identity(m, paths) or ()) for m in (a, b)}
        return {"stale": True, "reason": "cross_project", "projects": identities}
    return None


def stale_sweep(app: App, owner: str, tally: Tally, run_id: str | None, *, dry_run: bool = False) -> None:
    with system_tx(app.store, "hygiene", write=not dry_run) as tx:
        paths = project_paths(tx, owner)
        for dispute in pending_pairs(tx, owner):
            sides = tx.get_memories([dispute.memory_a, dispute.memory_b or dispute.memory_a], SYSTEM)
            why = moot(dispute, sides, paths)
            if why is None:
                continue
            if dry_run or transitions.dismiss(
                tx, dispute, actor="hygiene.stale_sweep", at=app.clock(), why=why, run_id=run_id
            ):
                tally.add("dismissed_stale")


def rejudge(app: App, owner: str, tally: Tally, run_id: str | None, *, dry_run: bool = False) -> None:
    judge = judge_for(app.judge_factory, owner, run_id)
    if judge.offer_mode:
        tally.notes.append("rejudge skipped: no judge is configured (offer mode)")
        return
    with system_tx(app.store, "hygiene") as tx:
        rows = pending_pairs(tx, owner)
    for dispute in rows:
        with system_tx(app.store, "hygiene") as tx:
            sides = tx.get_memories([dispute.memory_a, dispute.memory_b or ""], SYSTEM)
        a, b = sides.get(dispute.memory_a), sides.get(dispute.memory_b or "")
        if a is None or b is None or not (a.live and b.live):
            continue
        now = app.clock()
        request = PairRequest(
            JudgedMemory.of(a, now), JudgedMemory.of(b, now), Purpose.REJUDGE, provisional=0 in (a.rank, b.rank)
        )
        result = judge.ask(request)
        if isinstance(result, JudgeFailure):
            tally.add("failed_judgements")
            continue
        if not isinstance(result, Judged):
            continue
        tally.add("judged")
        verdict = result.answer.verdict
        if verdict not in KEEP_VERDICTS:
            continue
        why = {
            "rejudge": verdict.value,
            "confidence": result.answer.confidence,
            "rationale": result.answer.rationale,
            "model": result.usage.model,
        }
        if dry_run:
            tally.add("dismissed_rejudge")
            continue
        with system_tx(app.store, "hygiene", write=True) as tx:
            current = tx.get_dispute(dispute.id)
            if (
                current
                and current.pending
                and transitions.dismiss(tx, current, actor="hygiene.rejudge", at=app.clock(), why=why, run_id=run_id)
            ):
                tally.add("dismissed_rejudge")
