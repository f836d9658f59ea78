"""Undo a run: restore every memory it invalidated, reopen every loop it closed, remove the links it added.

Review-queue rows the run raised stay where they are: they are questions for
a person, not actions. A memory an undo brings back is marked restored, so
no automatic path retires it again (the pair may only be queued); its
judgements stay cached as well.
"""

from __future__ import annotations

from pydantic import BaseModel

from zero_memory import errors, transitions
from zero_memory.app import App
from zero_memory.domain.memory import InvalidationReason, Memory, Status
from zero_memory.memory import anchoring
from zero_memory.memory.refine import REFINE
from zero_memory.memory.verification import VERIFY_RETIRE
from zero_memory.store import SYSTEM, system_tx

# The automatic invalidations a run records: a resolved pair, a loop the loop-closure stage closed, the
# older write of a same-session refinement, and a provisional memory a verification found made untrue.
UNDONE = ("hygiene.auto_resolve", "close_loop", REFINE, VERIFY_RETIRE)


def _still_as_left(action: str, memory: Memory, successor: str) -> bool:
    """The memory is still invalidated the way the run left it (not since restored and retired otherwise)."""
    if action == "close_loop":
        return memory.invalidated_reason is InvalidationReason.CLOSED
    if action == VERIFY_RETIRE:
        return memory.invalidated_reason is InvalidationReason.RETIRED
    return memory.superseded_by == successor


class UndoReport(BaseModel):
    run_id: str
    restored: list[str]
    already_live: list[str]
    unlinked: int
    anchors_moved_back: int = 0


def undo_run(app: App, run_id: str, *, actor: str, owner: str | None = None) -> UndoReport:
    """Undo a run; ``owner`` limits it to runs over that owner's memories (None: an administrator)."""
    now = app.clock()
    restored, already = [], []
    with system_tx(app.store, "hygiene", write=True) as tx:
        run = tx.get_run(run_id)
        if run is None or (owner is not None and run.owner not in (owner, None)):
            raise errors.not_found(f"run {run_id[:80]}")
        moved_back = 0
        for entry in tx.audit_for_run(run_id):
            if owner is not None and entry.owner != owner:
                continue
            if entry.action in anchoring.ANCHOR_ACTIONS:
                # A verification followed the code: the anchor goes back to where it was.
                moved_back += anchoring.put_back(tx, entry.memory_ids[0], entry.payload, now)
                continue
            if entry.action not in UNDONE:
                continue
            successor, loser_id = entry.memory_ids[0], entry.memory_ids[-1]
            loser = tx.get_memory(loser_id, SYSTEM)
            if loser is None or loser.status is Status.LIVE or not _still_as_left(entry.action, loser, successor):
                already.append(loser_id)
                continue
            transitions.restore(tx, loser, actor=actor, at=now, run_id=run_id, payload={"undo": run_id})
            restored.append(loser_id)
        unlinked = transitions.undo_links(
            tx, run, actor=actor, at=now, restored=restored, anchors_moved_back=moved_back
        )
    return UndoReport(
        run_id=run_id, restored=restored, already_live=already, unlinked=unlinked, anchors_moved_back=moved_back
    )
