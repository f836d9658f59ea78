"""On-demand cycles over the caller's own memories (``scan_hygiene``, ``zm hygiene scan``, the dashboard)."""

from __future__ import annotations

from pydantic import BaseModel

from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.domain.records import RunStatus
from zero_memory.hygiene.cycle import start_cycle
from zero_memory.memory.models import SessionInfo
from zero_memory.store import system_tx


class ScanResult(BaseModel):
    run_id: str
    status: str
    dry_run: bool = False
    subjects: int | None = None
    pairs_considered: int | None = None
    skipped_settled: int | None = None
    skipped_cross_project: int | None = None
    skipped_cached: int | None = None
    skipped_declared: int | None = None
    skipped_dead: int | None = None
    judged: int | None = None
    auto_resolved: int | None = None
    queued: int | None = None
    linked_complementary: int | None = None
    dismissed_stale: int | None = None
    dismissed_rejudge: int | None = None
    rescanned: int | None = None
    portability_proposed: int | None = None
    stale_suspects: int | None = None
    loops_closed: int | None = None
    failed_judgements: int | None = None
    notes: list[str] | None = None
    session: SessionInfo | None = None


def scan_hygiene(
    app: App,
    caller: Caller,
    *,
    rejudge: bool = False,
    dry_run: bool = False,
    wait: bool = False,
    session: SessionInfo | None = None,
) -> ScanResult:
    run, summary = start_cycle(app, caller.uid, started_by=caller.uid, dry_run=dry_run, rejudge=rejudge, wait=wait)
    if summary is None:
        return ScanResult(run_id=run.id, status=RunStatus.RUNNING.value, dry_run=dry_run, session=session)
    with system_tx(app.store, "hygiene") as tx:
        finished = tx.get_run(run.id)
    status = finished.status.value if finished else RunStatus.COMPLETED.value
    return ScanResult(run_id=run.id, status=status, dry_run=dry_run, session=session, **summary)
