"""Where a write goes and what a read covers, for one caller and session.

The write target is the call's ``scope`` or ``project_hint``, else the
session's attached project; the server never picks a scope for the caller. A
session attaches to the first project a hint resolves to and keeps it; a
session whose transport knows its workspace (a stdio server started in a
repository) is attached to that repository's project before its first call.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from zero_memory import errors
from zero_memory.access.projects import resolve_hint
from zero_memory.access.visibility import visibility
from zero_memory.domain import scopes
from zero_memory.domain.records import Visibility
from zero_memory.memory.models import SessionInfo
from zero_memory.store.base import Store, Tx

ALL = "*"


@dataclass(frozen=True, slots=True)
class SessionState:
    session_id: str | None
    attached: str | None
    # A dry resolution left something to write: a project to create, the session to attach.
    pending: bool = False

    @property
    def info(self) -> SessionInfo:
        return SessionInfo(attached_project=self.attached, session_id=self.session_id)


def session_state(
    tx: Tx,
    vis: Visibility,
    session_id: str | None,
    project_hint: str | None,
    *,
    auto_create: bool,
    at: datetime,
    dry: bool = False,
) -> tuple[SessionState, str | None]:
    """The session after this call's hint, and the project the hint named (if any).

    ``dry`` resolves without creating a project or attaching the session, for
    the checks a write makes before it takes the write lock.
    """
    attached = tx.get_session(vis.uid, session_id) if session_id else None
    hinted = None
    pending = False
    if project_hint is not None:
        resolution = resolve_hint(tx, vis, project_hint, auto_create=auto_create, dry=dry)
        hinted, pending = resolution.scope, resolution.pending
        if session_id and attached is None:
            attached = hinted if dry else tx.attach_session(vis.uid, session_id, hinted, at)
            pending = dry
    return SessionState(session_id, attached, pending), hinted


def hint_pending(
    store: Store, uid: str, session_id: str | None, project_hint: str, *, auto_create: bool, at: datetime
) -> bool:
    """Whether a hint names a project still to create or a session still to attach, looked at in a read
    transaction of its own (for a read that must see them settled: ``build_context``)."""
    with store.tx() as tx:
        vis = visibility(tx, uid)
        session, _ = session_state(tx, vis, session_id, project_hint, auto_create=auto_create, at=at, dry=True)
    return session.pending


def settle_hint(
    store: Store, uid: str, session_id: str | None, project_hint: str | None, *, auto_create: bool, at: datetime
) -> None:
    """Create the project a hint names and attach the session to it, where either is still to do.

    For a read that carries a hint and found, resolving it dry in its own read transaction, that
    something is pending (``SessionState.pending``): once both are done (every later call of the
    session) the read takes no write lock. Before, a recall with a hint ran whole in a write
    transaction, and recalls queued behind each other and every write of every process.
    """
    if project_hint is None:
        return
    with store.tx(write=True) as tx:
        vis = visibility(tx, uid)
        session_state(tx, vis, session_id, project_hint, auto_create=auto_create, at=at)


def attached_project(store: Store, uid: str, session_id: str) -> str | None:
    """The project scope a session is attached to, or None."""
    with store.tx() as tx:
        tx.act_as(uid)
        return tx.get_session(uid, session_id)


def is_attached(store: Store, uid: str, session_id: str) -> bool:
    return attached_project(store, uid, session_id) is not None


def attach_workspace(
    store: Store, uid: str, session_id: str | None, workspace: str | None, *, auto_create: bool, at: datetime
) -> None:
    """Attach a session that is attached to nothing yet to the project of the repository it works in.

    A workspace in no repository (``~/Downloads``) names no project: the session stays unattached, and a
    write with no scope there is refused with ``scope_target_required:`` rather than creating a project.
    Looked at in a read transaction first, so every call after the first takes no write lock.
    """
    if not session_id or not workspace:
        return
    with store.tx() as tx:
        vis = visibility(tx, uid)
        if tx.get_session(uid, session_id) is not None:
            return
        try:
            resolve_hint(tx, vis, workspace, auto_create=auto_create, dry=True)
        except errors.ZMError:
            return
    with store.tx(write=True) as tx:
        session_state(tx, visibility(tx, uid), session_id, workspace, auto_create=auto_create, at=at)


def shorthand(vis: Visibility, tx: Tx, name: str) -> str:
    """A full scope path for a scope argument: a path, ``core``, ``personal`` or a project slug."""
    if name == "core":
        return scopes.core(vis.uid)
    if name == "personal":
        return scopes.personal(vis.uid)
    if "." in name:
        scopes.parse(name)
        if not vis.can_read(name):
            raise errors.validation(f"scope: {name[:80]!r} is not a scope you can see")
        return name
    if scopes.is_slug(name):
        matches = sorted(s for s in vis.readable if s.split(".")[0] in ("proj", "team") and s.split(".")[-1] == name)
        own = [s for s in matches if s.split(".")[1] == vis.uid]
        if own:
            return own[0]
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise errors.validation(f"scope: {name!r} names several projects; pass the full scope path")
    raise errors.validation(f"scope: {name[:80]!r} is not a scope you can see")


def write_target(tx: Tx, vis: Visibility, scope: str | None, hinted: str | None, session: SessionState) -> str:
    if scope is not None:
        target = shorthand(vis, tx, scope)
    elif hinted is not None:
        target = hinted
    elif session.attached is not None:
        target = session.attached
    else:
        raise errors.validation(
            "this session is attached to no project (it works in no repository, and no call named a project): "
            'pass scope ("personal" for a memory of your own) or project_hint (a repository path, git remote or '
            "project name)",
            subcode=errors.SCOPE_TARGET_REQUIRED,
        )
    if not vis.can_write(target) and not _pending_own_project(vis, target):
        raise errors.validation(f"scope: {target} is read-only for you")
    return target


def read_set(
    tx: Tx, vis: Visibility, requested: list[str] | None, hinted: str | None, session: SessionState
) -> frozenset[str]:
    if requested:
        if ALL in requested:
            return vis.readable
        return frozenset(shorthand(vis, tx, name) for name in requested)
    default = {scopes.personal(vis.uid), scopes.core(vis.uid)}
    project = hinted or session.attached
    if project is not None and vis.can_read(project):
        default.add(project)
    return frozenset(default)


def _pending_own_project(vis: Visibility, scope: str) -> bool:
    """A project a dry hint resolution would create for the caller is theirs to write."""
    return scope.startswith(f"proj.{vis.uid}.") and scope not in vis.readable
