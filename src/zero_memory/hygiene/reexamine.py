"""Judge re-examination (docs/spec/hygiene.md §8): one look per judge model at memories in real use.

Candidates are live memories that recall returned at least
``rescan_min_surfacings`` times within ``rescan_window_days``, most surfaced
first, without a guard row for (memory, the exact ``ZM_HYGIENE_MODEL``
string). Each goes through the ordinary single-memory scan with every guard;
a guard row is written whichever way it went. A run examines at most
``rescan_max_subjects`` and stops once it has queued
``rescan_max_new_queue_rows``; unreached subjects lead the next run, and so
does a subject the cap interrupted part-way through its neighbours: it is
stamped only once the model has seen all of them. A subject retired before
its turn (by an earlier subject's scan) is neither examined nor counted.
"""

from __future__ import annotations

from datetime import timedelta

from zero_memory import transitions
from zero_memory.app import App
from zero_memory.domain.memory import Memory
from zero_memory.hygiene.candidates import neighbours
from zero_memory.hygiene.runs import Tally
from zero_memory.hygiene.scan import ScanOptions, scan_pairs
from zero_memory.judge.owners import judge_for
from zero_memory.judge.question import Purpose
from zero_memory.store import SYSTEM, system_tx


def candidates(app: App, owner: str) -> list[Memory]:
    config = app.settings.hygiene
    model = app.settings.hygiene_model
    since = app.clock() - timedelta(days=config.rescan_window_days)
    with system_tx(app.store, "hygiene") as tx:
        counts = tx.surfacing_counts(since=since, min_count=config.rescan_min_surfacings)
        ids = [memory_id for memory_id, _ in counts]
        memories = tx.get_memories(ids, SYSTEM)
        done = tx.guarded(ids, model)
    return [
        memories[i] for i in ids if i in memories and memories[i].owner == owner and memories[i].live and i not in done
    ]


def step(app: App, owner: str, tally: Tally, run_id: str | None, dry_run: bool) -> None:
    if judge_for(app.judge_factory, owner, run_id).offer_mode:
        return
    config = app.settings.hygiene
    queued_before = tally.counts["queued"]
    for subject in candidates(app, owner)[: config.rescan_max_subjects]:
        remaining = config.rescan_max_new_queue_rows - (tally.counts["queued"] - queued_before)
        with system_tx(app.store, "hygiene") as tx:
            current = tx.get_memory(subject.id, SYSTEM)
            # An earlier subject's scan may have retired this one: there is nothing left to examine.
            if current is None or not current.live:
                continue
            pairs = neighbours(tx, current, floor=config.sweep_similarity, limit=config.sweep_max_candidates)
        options = ScanOptions(purpose=Purpose.RESCAN, origin="rescan", dry_run=dry_run, max_new_rows=remaining)
        finished = scan_pairs(app, owner, pairs, tally, options, run_id)
        capped = not finished or tally.counts["queued"] - queued_before >= config.rescan_max_new_queue_rows
        if finished:
            tally.add("rescanned")
        if not dry_run:
            record(app, owner, current, run_id, pairs=len(pairs), finished=finished, capped=capped)
        if capped:
            return


def record(
    app: App, owner: str, subject: Memory, run_id: str | None, *, pairs: int, finished: bool, capped: bool
) -> None:
    """Stamp a subject the model has seen whole, and audit the look and a stop on the cap.

    A subject the cap interrupted stays unstamped, so it leads the next run and its unexamined neighbours
    are judged then (those already judged are skipped as settled or cached).
    """
    model = app.settings.hygiene_model
    cap = app.settings.hygiene.rescan_max_new_queue_rows
    now = app.clock()
    with system_tx(app.store, "hygiene", write=True) as tx:
        if finished:
            transitions.examine(tx, subject, owner=owner, model=model, at=now, run_id=run_id, payload={"pairs": pairs})
        if capped:
            transitions.cap_stop(
                tx, subject, owner=owner, at=now, run_id=run_id, payload={"cap": cap, "subject_finished": finished}
            )
