"""Open loops: the tasks and open questions still open, and those closed, with their audit trail.

A loop's trail is every close and every reopen (``restore``, by a person or by
undoing the run that closed it), oldest first, up to the last ``AUDIT_PER_LOOP``.

A loop stays in sight until it is closed: it never decays in recall, every
briefing lists it, and ``zm loops`` and the dashboard's Open loops page show
it. ``close_loop`` (``memory.lifecycle``) is the one way to close one by hand,
``restore_memory`` reopens it; this module only reads.
"""

from __future__ import annotations

from datetime import datetime

from zero_memory import errors
from zero_memory.access.caller import Caller
from zero_memory.access.projects import resolve_hint
from zero_memory.access.visibility import visibility
from zero_memory.app import App
from zero_memory.clock import to_text
from zero_memory.domain import scopes
from zero_memory.domain.memory import OPEN_LOOP_KINDS, Memory, age_days
from zero_memory.domain.records import AuditEntry
from zero_memory.memory.context_models import LoopList, LoopView
from zero_memory.memory.models import AuditView
from zero_memory.memory.validation import check_fields

STATUSES = ("open", "closed")
MAX_LIMIT = 500
AUDIT_PER_LOOP = 20
TRAIL_ACTIONS = ("close_loop", "restore")


def list_loops(
    app: App, caller: Caller, *, status: str = "open", project_hint: str | None = None, limit: int = 100
) -> LoopList:
    """Open loops oldest first (or closed ones, most recently closed first) in every visible scope,
    or in one project plus the caller's personal and core scopes."""
    if status not in STATUSES:
        raise errors.validation("status: expected open or closed")
    if not 1 <= limit <= MAX_LIMIT:
        raise errors.validation(f"limit: must be between 1 and {MAX_LIMIT}")
    check_fields({"project_hint": project_hint})
    now = app.clock()
    with app.store.tx() as tx:
        vis = visibility(tx, caller.uid)
        covered = vis.readable
        if project_hint is not None:
            project = resolve_hint(tx, vis, project_hint, auto_create=False).scope
            covered = frozenset({project, scopes.personal(vis.uid), scopes.core(vis.uid)}) & vis.readable
        if status == "open":
            found = tx.live_memories(scopes=covered, kinds=[k.value for k in OPEN_LOOP_KINDS], limit=limit + 1)
        else:
            found = tx.closed_loops(covered, limit=limit + 1)
        page = found[:limit]
        trails = {m.id: tx.audit_for_memory(m.id, actions=TRAIL_ACTIONS, limit=AUDIT_PER_LOOP) for m in page}
    return LoopList(loops=[loop_view(m, trails[m.id], now) for m in page], status=status, more=len(found) > limit)


def loop_view(memory: Memory, trail: list[AuditEntry], now: datetime) -> LoopView:
    """``trail``: the loop's closes and reopens, newest first (as the store returns them)."""
    closing = next((a for a in trail if a.action == "close_loop"), None)
    days = round(age_days(memory.created_at, now), 1)
    closed = not memory.live and closing is not None
    return LoopView(
        id=memory.id,
        kind=memory.kind,
        scope=memory.scope,
        content=memory.content,
        status="closed" if not memory.live else "open",
        age_days=days,
        open_days=days if memory.live else None,
        closed_at=to_text(closing.at) if closed and closing else None,
        closed_by=closing.actor if closed and closing else None,
        note=_text(closing.payload.get("note")) if closed and closing else None,
        run_id=closing.run_id if closed and closing else None,
        audit=[
            AuditView(
                at=to_text(a.at),
                actor=a.actor,
                action=a.action,
                memory_ids=a.memory_ids,
                payload=a.payload,
                run_id=a.run_id,
            )
            for a in reversed(trail[:AUDIT_PER_LOOP])
        ],
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None
