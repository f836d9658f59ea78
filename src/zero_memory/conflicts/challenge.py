"""``challenge``: an agent doubts one memory against the world (not against a neighbour).

Raises a ``challenged`` single-subject row. While a row of doubt about the
memory is open (``challenged``, or ``stale_suspect`` once escalated), a
challenge from another session is recorded on that row, its reason kept, and
the same ``dispute_id`` comes back with ``created: false``; a repeat from a
session already recorded on it writes nothing. Each recorded session is one
misled signal for stale-suspect detection (memory/misled.py). The reason
passes the content guard.
"""

from __future__ import annotations

from datetime import datetime

from zero_memory import transitions
from zero_memory.access.caller import Caller
from zero_memory.access.visibility import visibility
from zero_memory.app import App
from zero_memory.conflicts.models import ChallengeResult
from zero_memory.domain.memory import Memory
from zero_memory.domain.records import Dispute, DisputeShape
from zero_memory.ids import new_id
from zero_memory.memory import misled
from zero_memory.memory.lifecycle import visible
from zero_memory.memory.validation import check_fields, check_text
from zero_memory.store.base import Tx

CHALLENGED = misled.CHALLENGED
MAX_REASON = 2_000


def challenge(
    app: App, caller: Caller, memory_id: str, reason: str, *, session_id: str | None = None
) -> ChallengeResult:
    """``session_id``: the client's own conversation id; by default the caller's transport session."""
    check_text("reason", reason, max_chars=MAX_REASON)
    check_fields({"reason": reason})
    session = misled.session_key(caller.uid, session_id or caller.session_id)
    now = app.clock()
    with app.store.tx(write=True) as tx:
        vis = visibility(tx, caller.uid)
        memory = visible(tx, vis, memory_id)
        # Two sessions challenging at once must find one row: the second waits and joins the first's.
        tx.serialize(f"challenge:{memory.id}")
        doubt = next(
            (
                d
                for d in tx.open_disputes_for([memory.id])
                if d.shape is DisputeShape.SINGLE and d.verdict in misled.DOUBTS
            ),
            None,
        )
        if doubt is not None:
            if session not in misled.challengers(tx, memory.id, doubt.id):
                _signal(tx, caller, memory, doubt.id, reason, session, now)
            return ChallengeResult(dispute_id=doubt.id, created=False)
        dispute = Dispute.single(
            new_id("dsp"),
            owner=memory.owner,
            verdict=CHALLENGED,
            origin="challenge",
            memory_id=memory.id,
            at=now,
            reason=reason,
        )
        _signal(tx, caller, memory, dispute.id, reason, session, now)
        transitions.raise_dispute(tx, dispute, actor=caller.uid, at=now)
    return ChallengeResult(dispute_id=dispute.id, created=True)


def _signal(tx: Tx, caller: Caller, memory: Memory, dispute_id: str, reason: str, session: str, at: datetime) -> None:
    """One session's challenge, recorded on the row it raised or joined."""
    transitions.challenge(
        tx,
        memory,
        dispute_id,
        actor=caller.uid,
        at=at,
        payload={"reason": reason, "client": caller.client, "session": session},
    )
