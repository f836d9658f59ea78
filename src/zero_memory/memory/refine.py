"""Same-session refinement (docs/spec/hygiene.md §3): two authoritative writes of one session, nearly identical.

The newer supersedes the older, at write time and without a judge, never
across sessions or projects. Like every automatic retirement it belongs to a
run: a run of kind ``refine`` is started and finished inside the write's
transaction, so ``zm hygiene runs``, the dashboard's Runs page and ``zm
hygiene undo RUN`` see it as they see a hygiene run's, and never half of it.
An older side that was once restored, or has a pending row, is never retired
automatically (``transitions.hold``, the guard of every automatic
retirement): the pair is queued instead. The guard is asked before the run
is opened, so a refinement that only queues opens no run.
"""

from __future__ import annotations

from datetime import datetime

from zero_memory import transitions
from zero_memory.access.caller import Caller
from zero_memory.access.project_identity import different_projects
from zero_memory.domain.memory import InvalidationReason, Memory, Rank, session_keys
from zero_memory.domain.records import Dispute, DisputeShape, DisputeStatus, Run, RunStatus, pair_key
from zero_memory.ids import new_id
from zero_memory.memory.nearby import Neighbourhood, Question
from zero_memory.store.base import Tx

REFINE = "refine"  # the audit action of a refinement, and the kind of the run it belongs to
REFINE_COUNT = 5  # the writer's memories nearest the new one that refinement looks at


def refine_same_session(
    tx: Tx, caller: Caller, new: Memory, near: Neighbourhood, floor: float, now: datetime, paths: dict[str, str]
) -> list[str]:
    """Two authoritative writes of one session, nearly identical (at or above ``floor``): the newer supersedes the
    older. The older is one of the writer's ``REFINE_COUNT`` memories nearest ``new`` (``near``)."""
    keys = new.session_keys
    if new.rank < Rank.AGENT or not keys:
        return []
    refined: list[str] = []
    run: Run | None = None
    for neighbour in near.ask(Question(floor, REFINE_COUNT, exclude=frozenset({new.id}))):
        old = neighbour.memory
        if old.rank < Rank.AGENT or not (session_keys(old.source) & keys) or different_projects(old, new, paths):
            continue
        if transitions.hold(tx, old, _queued(old, new, neighbour.similarity, now), actor=new.owner, at=now):
            continue
        run = run or _refinement_run(tx, caller, now)
        transitions.retire(
            tx,
            old,
            successor=new.id,
            reason=InvalidationReason.SUPERSEDED,
            actor=caller.uid,
            action=REFINE,
            at=now,
            payload={"similarity": round(neighbour.similarity, 4)},
            run_id=run.id,
        )
        refined.append(old.id)
    if run is not None:
        transitions.finish_run(tx, run, RunStatus.COMPLETED, {"auto_resolved": len(refined)}, at=now)
    return refined


def _refinement_run(tx: Tx, caller: Caller, now: datetime) -> Run:
    """The run a refinement's retirements belong to: started and finished inside the write's transaction, so
    the Runs page and ``zm hygiene undo`` see it like any automatic action's run, and never half of it."""
    run = Run.running(new_id("run"), owner=caller.uid, kind=REFINE, started_by=caller.uid, at=now)
    transitions.start_run(tx, run, at=now)
    return run


def _queued(old: Memory, new: Memory, similarity: float, now: datetime) -> transitions.Queued:
    """A refinement the guard holds back: a pending ``supersedes`` row (new over old) instead."""
    dispute = Dispute(
        id=new_id("dsp"),
        owner=new.owner,
        shape=DisputeShape.PAIR,
        verdict="supersedes",
        direction="b_supersedes_a",
        rationale=(
            f"written in the same session as the newer memory (similarity {similarity:.2f}); "
            + (
                "the older one was restored after an invalidation, so it is not retired automatically"
                if old.restored
                else "the older one has a pending review-queue row, so it is not retired automatically"
            )
        ),
        origin="refine",
        status=DisputeStatus.PENDING,
        memory_a=old.id,
        memory_b=new.id,
        pair_key=pair_key(old.id, new.id),
        created_at=now,
    )
    return transitions.Queued(dispute, {"similarity": round(similarity, 4)})
