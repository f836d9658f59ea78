"""Hygiene runs as the dashboard shows them: a user's own runs, and what one run did.

Write-triggered runs (one per scanned write, one per same-session refinement) are grouped by day, so they
do not bury the cycles.

A run over another user's memories answers exactly as a missing one.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import UTC, date

from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.domain.records import AuditEntry, Run, RunStatus
from zero_memory.hygiene.cycle import ON_WRITE
from zero_memory.hygiene.runs import COUNTS, run_of, runs_of
from zero_memory.memory.refine import REFINE

# The runs a write starts: its on-write scan, its same-session refinement. Many and small, folded by day.
WRITE_KINDS = (ON_WRITE, REFINE)

# What a run did to memories and the queue, as its audit rows name it.
ACTIONS = {
    "hygiene.auto_resolve": "invalidated",
    REFINE: "invalidated (refined in the same session)",
    "hygiene.link": "linked",
    "queue.raise": "queued",
    "queue.dismiss": "dismissed",
    "portability.propose": "proposed as portable",
    "restore": "restored",
}
UNDOABLE = ("auto_resolved", "linked_complementary")


@dataclass(frozen=True, slots=True)
class RunView:
    run: Run

    @property
    def id(self) -> str:
        return self.run.id

    @property
    def running(self) -> bool:
        return self.run.status is RunStatus.RUNNING

    @property
    def counts(self) -> list[tuple[str, int]]:
        """The summary's counts in pipeline order, zeros left out."""
        summary = self.run.summary
        return [(name, int(summary[name])) for name in COUNTS if isinstance(summary.get(name), int) and summary[name]]

    @property
    def notes(self) -> list[str]:
        notes = self.run.summary.get("notes")
        return [str(n) for n in notes] if isinstance(notes, list) else []

    @property
    def undoable(self) -> bool:
        """A finished, real run that changed memories or links."""
        summary = self.run.summary
        return not self.running and not self.run.dry_run and any(summary.get(n) for n in UNDOABLE)


@dataclass(frozen=True, slots=True)
class RunDetail:
    view: RunView
    actions: list[AuditEntry]
    undone: bool


@dataclass(frozen=True, slots=True)
class RunDay:
    """The write-triggered runs (scans, refinements) of one UTC day: many and small, folded under one line."""

    day: date
    runs: list[RunView]

    @property
    def counts(self) -> list[tuple[str, int]]:
        """The day's counts summed over its runs, in pipeline order, zeros left out."""
        summed: Counter[str] = Counter()
        for view in self.runs:
            summed.update(dict(view.counts))
        return [(name, summed[name]) for name in COUNTS if summed[name]]


@dataclass(frozen=True, slots=True)
class RunsPage:
    cycles: list[RunView]
    write_days: list[RunDay]


def list_runs(app: App, caller: Caller, *, limit: int = 50, window: int = 1_000) -> RunsPage:
    """A user's newest cycles (at most ``limit``), and their ``window`` newest write-triggered runs grouped by
    day, newest first: each read on its own, so a flood of small write-triggered runs never hides a cycle."""
    cycles = runs_of(app, caller.uid, limit=limit, not_kinds=WRITE_KINDS)
    written = runs_of(app, caller.uid, limit=window, kinds=WRITE_KINDS)
    days: dict[date, list[RunView]] = {}
    for run in written:
        days.setdefault(run.started_at.astimezone(UTC).date(), []).append(RunView(run))
    return RunsPage([RunView(r) for r in cycles], [RunDay(day, views) for day, views in days.items()])


def run_detail(app: App, caller: Caller, run_id: str) -> RunDetail:
    run, entries = run_of(app, caller.uid, run_id)
    actions = [e for e in entries if e.action in ACTIONS and e.owner == caller.uid]
    undone = any(e.action == "run.undo" for e in entries)
    return RunDetail(view=RunView(run), actions=actions, undone=undone)
