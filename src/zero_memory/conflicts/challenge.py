"""``challenge``: an agent doubts one memory against the world (not against a neighbour).

Raises a ``challenged`` single-subject row; idempotent while one is open (the
same ``dispute_id`` comes back with ``created: false``) and then writes
nothing, so one open row is one misled signal for stale-suspect detection,
however often it is repeated. The reason passes the content guard.
"""

from __future__ import annotations

from zero_memory import transitions
from zero_memory.access.caller import Caller
from zero_memory.access.visibility import visibility
from zero_memory.app import App
from zero_memory.conflicts.models import ChallengeResult
from zero_memory.domain.records import Dispute, DisputeShape, DisputeStatus
from zero_memory.ids import new_id
from zero_memory.memory.lifecycle import visible
from zero_memory.memory.validation import check_fields, check_text

CHALLENGED = "challenged"
MAX_REASON = 2_000


def challenge(app: App, caller: Caller, memory_id: str, reason: str) -> ChallengeResult:
    check_text("reason", reason, max_chars=MAX_REASON)
    check_fields({"reason": reason})
    now = app.clock()
    with app.store.tx(write=True) as tx:
        vis = visibility(tx, caller.uid)
        memory = visible(tx, vis, memory_id)
        for dispute in tx.open_disputes_for([memory.id]):
            if dispute.shape is DisputeShape.SINGLE and dispute.verdict == CHALLENGED:
                # The open row already carries this doubt: a repeat is no new evidence.
                return ChallengeResult(dispute_id=dispute.id, created=False)
        tx.add_audit(
            actor=caller.uid,
            action="challenge",
            owner=memory.owner,
            memory_ids=[memory.id],
            payload={"reason": reason, "client": caller.client},
            run_id=None,
            at=now,
        )
        dispute = Dispute(
            id=new_id("dsp"),
            owner=memory.owner,
            shape=DisputeShape.SINGLE,
            verdict=CHALLENGED,
            origin="challenge",
            status=DisputeStatus.PENDING,
            memory_a=memory.id,
            created_at=now,
            reason=reason,
        )
        transitions.raise_dispute(tx, dispute, actor=caller.uid, at=now)
    return ChallengeResult(dispute_id=dispute.id, created=True)
