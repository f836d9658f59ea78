"""Lifecycle: forget, restore, close a loop, move, link, re-affirm, and read one memory whole.

Nothing here deletes: every change sets or clears an invalidation, keeps the
row and its text, and writes an audit row. ``restore_memory`` undoes any
invalidation, whoever made it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from zero_memory import errors, transitions
from zero_memory.access.caller import Caller
from zero_memory.access.projects import resolve_hint
from zero_memory.access.visibility import visibility
from zero_memory.app import App
from zero_memory.clock import to_text
from zero_memory.domain.memory import InvalidationReason, Memory, Status
from zero_memory.domain.records import Visibility
from zero_memory.memory import anchoring, freshness
from zero_memory.memory.models import (
    AuditView,
    DisputeRef,
    GetMemoryResult,
    HistoryEntry,
    LifecycleResult,
    LinkResult,
    LinkView,
    MoveFailure,
    MoveResult,
    ReaffirmResult,
)
from zero_memory.memory.targets import shorthand
from zero_memory.memory.validation import check_fields
from zero_memory.memory.views import memory_view
from zero_memory.store.base import Tx

MAX_HISTORY = 50
AUDIT_PAGE = 50
MAX_AUDIT_PAGE = 200
MAX_MOVE = 100
CALLER_LINK_TYPES = ("relates_to", "derived_from", "contradicts")


def visible(tx: Tx, vis: Visibility, memory_id: str) -> Memory:
    """The memory, or ``not_found`` — the same answer for a missing id and another user's id."""
    memory = tx.get_memory(memory_id, vis) if isinstance(memory_id, str) and memory_id else None
    if memory is None:
        raise errors.not_found(f"memory {str(memory_id)[:80]}")
    return memory


def writable(tx: Tx, vis: Visibility, memory_id: str) -> Memory:
    memory = visible(tx, vis, memory_id)
    if not vis.can_write(memory.scope):
        raise errors.validation(f"id: {memory.id} is in {memory.scope}, which is read-only for you")
    return memory


def forget(app: App, caller: Caller, memory_id: str, reason: str | None = None) -> LifecycleResult:
    def act(tx: Tx, memory: Memory, now: datetime) -> None:
        transitions.retire(
            tx,
            memory,
            successor=None,
            reason=InvalidationReason.FORGOTTEN,
            actor=caller.uid,
            action="forget",
            at=now,
            payload={"note": reason} if reason else None,
        )

    return _invalidate(app, caller, memory_id, InvalidationReason.FORGOTTEN, act, note=reason, field="reason")


def close_loop(app: App, caller: Caller, memory_id: str, note: str | None = None) -> LifecycleResult:
    def act(tx: Tx, memory: Memory, now: datetime) -> None:
        transitions.close_loop(tx, memory, actor=caller.uid, at=now, note=note)

    return _invalidate(app, caller, memory_id, InvalidationReason.CLOSED, act, note=note, loops_only=True)


def _invalidate(
    app: App,
    caller: Caller,
    memory_id: str,
    reason: InvalidationReason,
    act: Callable[[Tx, Memory, datetime], None],
    *,
    note: str | None,
    field: str = "note",
    loops_only: bool = False,
) -> LifecycleResult:
    """Invalidate one writable memory by ``act`` (which sets ``reason``); one already invalidated is left as it is.

    ``field`` is the note's name as the caller passed it, so a refusal names the argument to fix.
    """
    check_fields({field: note})
    with app.store.tx(write=True) as tx:
        vis = visibility(tx, caller.uid)
        memory = writable(tx, vis, memory_id)
        if loops_only and not memory.open_loop:
            raise errors.validation(
                f"id: {memory.id} is a {memory.kind.value}, not an open loop (task or open-question)"
            )
        if not memory.live:
            return LifecycleResult(
                id=memory.id, status=memory.status.value, changed=False, invalidated_reason=_reason(memory)
            )
        act(tx, memory, app.clock())
    return LifecycleResult(id=memory.id, status=Status.INVALIDATED.value, changed=True, invalidated_reason=reason.value)


def restore_memory(app: App, caller: Caller, memory_id: str) -> LifecycleResult:
    now = app.clock()
    with app.store.tx(write=True) as tx:
        vis = visibility(tx, caller.uid)
        memory = writable(tx, vis, memory_id)
        if memory.live:
            return LifecycleResult(id=memory.id, status=Status.LIVE.value, changed=False)
        removed = transitions.restore(tx, memory, actor=caller.uid, at=now)
    return LifecycleResult(id=memory.id, status=Status.LIVE.value, changed=True, removed_links=removed)


def move_memories(
    app: App, caller: Caller, ids: list[str], *, scope: str | None = None, project_hint: str | None = None
) -> MoveResult:
    if (scope is None) == (project_hint is None):
        raise errors.validation("pass exactly one of scope or project_hint")
    if not ids or len(ids) > MAX_MOVE:
        raise errors.validation(f"ids: between 1 and {MAX_MOVE} ids")
    check_fields({"scope": scope, "project_hint": project_hint})
    now = app.clock()
    moved, unchanged, failed = [], [], []
    with app.store.tx(write=True) as tx:
        vis = visibility(tx, caller.uid)
        if scope is not None:
            target = shorthand(vis, tx, scope)
        else:
            assert project_hint is not None
            target = resolve_hint(tx, vis, project_hint, auto_create=app.settings.auto_create_projects).scope
            vis = visibility(tx, caller.uid)
        if not vis.can_write(target):
            raise errors.validation(f"scope: {target} is read-only for you")
        for memory_id in dict.fromkeys(ids):
            try:
                memory = writable(tx, vis, memory_id)
            except errors.ZMError as error:
                failed.append(MoveFailure(id=str(memory_id)[:100], error=str(error)))
                continue
            if memory.scope == target:
                unchanged.append(memory.id)
                continue
            transitions.move(tx, memory, target, actor=caller.uid, at=now)
            moved.append(memory.id)
    return MoveResult(moved=moved, unchanged=unchanged, failed=failed, scope=target)


def link(app: App, caller: Caller, src: str, dst: str, link_type: str) -> LinkResult:
    if link_type not in CALLER_LINK_TYPES:
        raise errors.validation(f"type: expected one of {', '.join(CALLER_LINK_TYPES)}")
    if src == dst:
        raise errors.validation("dst: a memory cannot be linked to itself")
    now = app.clock()
    with app.store.tx(write=True) as tx:
        vis = visibility(tx, caller.uid)
        a = writable(tx, vis, src)
        b = visible(tx, vis, dst)
        created = transitions.link(tx, a, b, link_type, actor=caller.uid, at=now)
    return LinkResult(src=a.id, dst=b.id, type=link_type, created=created)


def history(tx: Tx, vis: Visibility, memory: Memory) -> list[HistoryEntry]:
    """The supersede chain behind a memory: what it replaced, and what those replaced."""
    entries: list[HistoryEntry] = []
    seen = {memory.id}
    frontier = [(memory.id, 1)]
    while frontier and len(entries) < MAX_HISTORY:
        current, depth = frontier.pop(0)
        older_ids = [lk.dst for lk in tx.links_of(current) if lk.type == "supersedes" and lk.src == current]
        older = tx.get_memories([i for i in older_ids if i not in seen], vis)
        for old in sorted(older.values(), key=lambda m: m.created_at, reverse=True):
            seen.add(old.id)
            entries.append(
                HistoryEntry(
                    id=old.id,
                    content=old.content,
                    kind=old.kind,
                    status=old.status.value,
                    invalidated_reason=_reason(old),
                    created_at=to_text(old.created_at),
                    depth=depth,
                )
            )
            frontier.append((old.id, depth + 1))
    return entries


def reaffirm(app: App, caller: Caller, memory_id: str) -> ReaffirmResult:
    """A person vouches that a core fact or reference is still true: its freshness budget starts again."""
    now = app.clock()
    with app.store.tx(write=True) as tx:
        vis = visibility(tx, caller.uid)
        memory = writable(tx, vis, memory_id)
        if not memory.live:
            raise errors.conflict(f"{memory.id} is {memory.status.value}; restore it before re-affirming it")
        if not freshness.has_budget(memory):
            raise errors.validation(
                f"id: {memory.id} has no freshness budget to restart (only a core fact or reference has one)"
            )
        before = freshness.stale_days_of(memory, now, freshness.affirmed(tx, [memory], now).get(memory.id))
        transitions.reaffirm(
            tx, memory, actor=caller.uid, at=now, payload={"stale_days": before, "client": caller.client}
        )
    return ReaffirmResult(id=memory.id, stale_days_before=before, reaffirmed_at=to_text(now))


def audit_position(cursor: str | None) -> int | None:
    """The audit row a page continues after: ``next_cursor`` of the previous page."""
    if cursor is None:
        return None
    if not cursor.isdigit() or len(cursor) > 19:
        raise errors.validation(f"cursor: {cursor[:30]!r} is not a next_cursor from get_memory")
    return int(cursor)


def get_memory(
    app: App, caller: Caller, memory_id: str, *, limit: int = AUDIT_PAGE, cursor: str | None = None
) -> GetMemoryResult:
    """One memory whole; its audit trail newest first, ``limit`` rows a page, older pages by ``cursor``."""
    if not 1 <= limit <= MAX_AUDIT_PAGE:
        raise errors.validation(f"limit: between 1 and {MAX_AUDIT_PAGE}")
    before = audit_position(cursor)
    now = app.clock()
    with app.store.tx() as tx:
        vis = visibility(tx, caller.uid)
        memory = visible(tx, vis, memory_id)
        links = tx.links_of(memory.id)
        linked = tx.get_memories([lk.src if lk.dst == memory.id else lk.dst for lk in links], vis)
        links = [lk for lk in links if (lk.src if lk.dst == memory.id else lk.dst) in linked]
        disputes = tx.open_disputes_for([memory.id])
        page = tx.audit_for_memory(memory.id, limit=limit + 1, before=before)
        chain = history(tx, vis, memory)
        pinned = bool(tx.pinned([memory.id]))
        anchors = tx.anchors_of([memory.id]).get(memory.id, [])
        stale = freshness.stale_days_of(memory, now, freshness.affirmed(tx, [memory], now).get(memory.id))
    return GetMemoryResult(
        memory=memory_view(memory, now, disputed=bool(disputes), pinned=pinned, stale_days=stale),
        links=[
            LinkView(type=lk.type, src=lk.src, dst=lk.dst, created_at=to_text(lk.created_at), created_by=lk.created_by)
            for lk in links
        ],
        history=chain,
        anchors=[anchoring.view(record) for record in anchors],
        audit=[
            AuditView(
                at=to_text(a.at),
                actor=a.actor,
                action=a.action,
                memory_ids=a.memory_ids,
                payload=a.payload,
                run_id=a.run_id,
            )
            for a in page[:limit]
        ],
        next_cursor=str(page[limit - 1].seq) if len(page) > limit else None,
        disputes=[
            DisputeRef(
                id=d.id,
                shape=d.shape.value,
                verdict=d.verdict,
                origin=d.origin,
                status=d.status.value,
                memory_a=d.memory_a,
                memory_b=d.memory_b,
                reason=d.reason,
            )
            for d in disputes
        ],
    )


def _reason(memory: Memory) -> str | None:
    return memory.invalidated_reason.value if memory.invalidated_reason else None
