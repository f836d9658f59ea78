"""The retro pass over the backlog (docs/spec/hygiene.md §9).

Walks live memories oldest first with a wider aperture than the sweep
(``retro_similarity``, ``retro_max_candidates``). It never auto-resolves:
every pair not found complementary or unrelated is parked in the queue. It is
idempotent (a pair already queued is left as it is), ``max_new_rows`` caps the
new queue rows of one batch, and the batch ends with the cursor to resume
from. ``offer`` runs no model: pairs are parked ``unjudged``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from zero_memory import errors
from zero_memory.app import App
from zero_memory.clock import from_text, to_text
from zero_memory.domain.records import RunStatus
from zero_memory.hygiene import runs
from zero_memory.hygiene.candidates import neighbours
from zero_memory.hygiene.cycle import owner_lock
from zero_memory.hygiene.runs import Tally
from zero_memory.hygiene.scan import ScanOptions, scan_pairs
from zero_memory.judge.question import Purpose
from zero_memory.store import system_tx

PAGE = 200
START = "1970-01-01T00:00:00.000000Z"  # the cursor before the oldest memory


@dataclass(frozen=True, slots=True)
class RetroReport:
    run_id: str
    owner: str
    cursor: str | None
    done: bool
    summary: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "owner": self.owner, "cursor": self.cursor, "done": self.done, **self.summary}


def format_cursor(created_at: datetime, memory_id: str) -> str:
    return f"{to_text(created_at)}/{memory_id}"


def parse_cursor(cursor: str) -> tuple[datetime, str]:
    """``TIMESTAMP/ID`` as printed by a batch, or a bare ISO timestamp (everything after it)."""
    stamp, _, memory_id = cursor.strip().partition("/")
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        raise errors.validation(f"after: {cursor[:60]!r} is not a cursor (TIMESTAMP or TIMESTAMP/ID)") from None
    if moment.tzinfo is None:
        raise errors.validation("after: the timestamp needs a time zone (e.g. 2026-07-01T00:00:00Z)")
    # A bare timestamp means strictly after that moment: "~" sorts after every id.
    return from_text(to_text(moment)), memory_id or "~"


def count_remaining(app: App, owner: str, after: str | None) -> int:
    position = parse_cursor(after) if after else None
    total = 0
    with system_tx(app.store, "hygiene") as tx:
        while True:
            page = tx.live_memories(owner=owner, after=position, limit=1000)
            total += len(page)
            if len(page) < 1000:
                return total
            position = (page[-1].created_at, page[-1].id)


def retro(
    app: App,
    owner: str,
    *,
    max_new_rows: int,
    after: str | None = None,
    offer: bool = False,
    started_by: str,
    advance: Callable[[int], None] = lambda n: None,
) -> RetroReport:
    if max_new_rows < 1:
        raise errors.validation("max: must be at least 1")
    position = parse_cursor(after) if after else None
    config = app.settings.hygiene
    run = runs.start(app, owner=owner, kind="retro", started_by=started_by, dry_run=False)
    assert run is not None
    tally = Tally()
    cursor = after or START
    done = False
    with app.store.advisory_lock(runs.lock_name(run.id)), app.store.advisory_lock(owner_lock(owner)) as taken:
        if not taken:
            raise errors.conflict(f"another hygiene cycle of {owner} is running; try again when it ends")
        queued_before = 0
        while True:
            with system_tx(app.store, "hygiene") as tx:
                page = tx.live_memories(owner=owner, after=position, limit=PAGE)
            if not page:
                done = True
                break
            stopped = False
            for subject in page:
                remaining = max_new_rows - (tally.counts["queued"] - queued_before)
                with system_tx(app.store, "hygiene") as tx:
                    pairs = neighbours(tx, subject, floor=config.retro_similarity, limit=config.retro_max_candidates)
                tally.add("subjects")
                options = ScanOptions(
                    purpose=Purpose.RETRO, origin="retro", allow_auto=False, offer=offer, max_new_rows=remaining
                )
                if not scan_pairs(app, owner, pairs, tally, options, run.id):
                    stopped = True
                    break
                cursor = format_cursor(subject.created_at, subject.id)
                position = (subject.created_at, subject.id)
                advance(1)
            runs.beat(app, run, tally)
            if stopped:
                break
    summary = runs.finish(app, run, tally, RunStatus.COMPLETED)
    return RetroReport(run_id=run.id, owner=owner, cursor=None if done else cursor, done=done, summary=summary)
