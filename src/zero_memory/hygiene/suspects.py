"""Stale suspects (docs/spec/hygiene.md §11): a memory that keeps misleading agents gets a person's look.

A misled signal is one session's challenge (memory/misled.py): a challenge
from another session while the memory's row is open is recorded on that row,
each session once. When the distinct sessions a memory misled within
``stale_suspect_window_days`` reach ``stale_suspect_threshold``, its open
``challenged`` row is escalated in place to ``stale_suspect`` (one row, never
two); with no open row, one ``stale_suspect`` row is raised. Only the signals
after a person last settled a doubt about the memory count: a person's
dismissal holds until new sessions are misled, while an agent closing its own
challenge over MCP spends nothing, so what two sessions raised comes back
until a person has looked.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from zero_memory import transitions
from zero_memory.app import App
from zero_memory.domain.memory import Memory
from zero_memory.domain.records import Dispute, DisputeShape
from zero_memory.hygiene.runs import Tally
from zero_memory.ids import new_id
from zero_memory.memory import misled
from zero_memory.store import SYSTEM, system_tx
from zero_memory.store.base import Tx

SUSPECT = misled.SUSPECT
ACTOR = "hygiene.suspects"


def step(app: App, owner: str, tally: Tally, run_id: str | None, dry_run: bool) -> None:
    config = app.settings.hygiene
    now = app.clock()
    since = now - timedelta(days=config.stale_suspect_window_days)
    with system_tx(app.store, "hygiene") as tx:
        challenged = sorted(
            {
                mid
                for entry in tx.audit_actions(misled.CHALLENGE, since=since)
                if entry.owner == owner
                for mid in entry.memory_ids
            }
        )
    for memory_id in challenged:
        with system_tx(app.store, "hygiene", write=not dry_run) as tx:
            memory = tx.get_memory(memory_id, SYSTEM)
            if memory is None or not memory.live:
                continue
            floor = max(since, misled.last_spent(tx, memory_id) or since)
            sessions = len(misled.sessions_since(tx, memory_id, floor))
            if sessions < config.stale_suspect_threshold:
                continue
            doubts = [d for d in tx.open_disputes_for([memory_id]) if d.shape is DisputeShape.SINGLE]
            if any(d.verdict == SUSPECT for d in doubts):
                continue  # raised already, waiting for a person
            challenge = next((d for d in doubts if d.verdict == misled.CHALLENGED), None)
            if challenge is None and doubts:
                continue  # another single-subject row already asks a person about it
            tally.add("stale_suspects")
            if not dry_run:
                _suspect(tx, memory, challenge, sessions, floor, now, run_id)


def _suspect(
    tx: Tx,
    memory: Memory,
    challenge: Dispute | None,
    sessions: int,
    floor: datetime,
    now: datetime,
    run_id: str | None,
) -> None:
    """Escalate the memory's open challenge in place, or raise one ``stale_suspect`` row."""
    evidence = {"signals": sessions, "since": floor.date().isoformat()}
    if challenge is not None:
        transitions.escalate(tx, challenge, SUSPECT, actor=ACTOR, at=now, run_id=run_id, payload=evidence)
        return
    dispute = Dispute.single(
        new_id("dsp"),
        owner=memory.owner,
        verdict=SUSPECT,
        origin="stale_suspect",
        memory_id=memory.id,
        at=now,
        reason=f"misled {sessions} sessions since {evidence['since']}",
        run_id=run_id,
    )
    transitions.raise_dispute(tx, dispute, actor=ACTOR, at=now, payload=evidence)
