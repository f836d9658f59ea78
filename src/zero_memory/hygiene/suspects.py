"""Stale suspects (docs/spec/hygiene.md §11): a memory that keeps misleading agents gets a second look.

Challenges are counted per memory, one per challenged row (a repeated
``challenge`` while its row is open writes no second signal). Reaching
``stale_suspect_threshold`` within ``stale_suspect_window_days`` raises one
``stale_suspect`` single-subject row. Memories with an open single-subject
row are skipped, and only evidence newer than the last settlement of any
single-subject row about the memory counts (upheld or retired, challenged or
suspected): a memory a person just cleared is not raised again on the
evidence they cleared it of.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from itertools import takewhile

from zero_memory import transitions
from zero_memory.app import App
from zero_memory.domain.records import AuditEntry, Dispute, DisputeShape, DisputeStatus
from zero_memory.hygiene.runs import Tally
from zero_memory.ids import new_id
from zero_memory.store import system_tx
from zero_memory.store.base import SYSTEM, Tx

SUSPECT = "stale_suspect"


SETTLED = ("queue.resolve", "queue.dismiss")
SIGNAL = ("challenge",)
PAGE = 200


def newest_first(tx: Tx, memory_id: str, actions: Sequence[str]) -> Iterator[AuditEntry]:
    """The memory's audit rows of these actions, newest first, however long its trail."""
    before = None
    while True:
        page = tx.audit_for_memory(memory_id, actions=actions, before=before, limit=PAGE)
        yield from page
        if len(page) < PAGE:
            return
        before = page[-1].seq


def last_reset(tx: Tx, memory_id: str) -> datetime | None:
    """When a single-subject row about the memory was last settled, whatever its verdict or outcome.

    Whoever upheld or retired a challenge, or settled a suspicion, has looked at the memory: the evidence
    before that moment is spent. A single-subject row's audit rows name its one memory only.
    """
    return next((e.at for e in newest_first(tx, memory_id, SETTLED) if len(e.memory_ids) == 1), None)


def signals_since(tx: Tx, memory_id: str, floor: datetime) -> int:
    return sum(1 for _ in takewhile(lambda e: e.at > floor, newest_first(tx, memory_id, SIGNAL)))


def step(app: App, owner: str, tally: Tally, run_id: str | None, dry_run: bool) -> None:
    config = app.settings.hygiene
    now = app.clock()
    since = now - timedelta(days=config.stale_suspect_window_days)
    with system_tx(app.store, "hygiene") as tx:
        challenged = sorted(
            {
                mid
                for entry in tx.audit_actions("challenge", since=since)
                if entry.owner == owner
                for mid in entry.memory_ids
            }
        )
    for memory_id in challenged:
        with system_tx(app.store, "hygiene", write=not dry_run) as tx:
            memory = tx.get_memory(memory_id, SYSTEM)
            if memory is None or not memory.live:
                continue
            if any(d.shape is DisputeShape.SINGLE for d in tx.open_disputes_for([memory_id])):
                continue
            floor = max(since, last_reset(tx, memory_id) or since)
            signals = signals_since(tx, memory_id, floor)
            if signals < config.stale_suspect_threshold:
                continue
            tally.add("stale_suspects")
            if dry_run:
                continue
            dispute = Dispute(
                id=new_id("dsp"),
                owner=memory.owner,
                shape=DisputeShape.SINGLE,
                verdict=SUSPECT,
                origin="stale_suspect",
                status=DisputeStatus.PENDING,
                memory_a=memory_id,
                created_at=now,
                reason=f"challenged {signals} times since {floor.date().isoformat()}",
                run_id=run_id,
            )
            transitions.raise_dispute(tx, dispute, actor="hygiene.suspects", at=now, payload={"signals": signals})
