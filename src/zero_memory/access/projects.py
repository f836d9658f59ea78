"""Projects, membership, and resolving a project hint.

A hint is a repository path, a git remote URL, or a project name. It resolves
among the projects the caller can see; when none matches, a project is created
for the caller (slug from the directory or remote name) unless
``ZM_AUTO_CREATE_PROJECTS=0``.

A path that exists here is read as the repository it is in: its main working
tree's root and origin remote (``access.repository``). A project is matched by
path (the directory or an ancestor), then by remote: a subdirectory or a
worktree is the repository's project, a clone elsewhere of the same remote is
the same project, a fork is another. A directory here that is in no repository
names no project and creates none (``project_hint_unresolvable:``). A path not
on this machine (a remote client's) keeps its directory name. Two repositories
with one folder name are two projects: the second gets a free slug
(``api-2``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from zero_memory import errors
from zero_memory.access.repository import find_repository, normalize_path
from zero_memory.access.visibility import visibility
from zero_memory.clock import utcnow
from zero_memory.domain import scopes
from zero_memory.domain.records import Project, Visibility
from zero_memory.domain.remotes import SCP_REMOTE_RE, normalize_remote
from zero_memory.domain.scopes import Role, ScopeKind
from zero_memory.store import system_tx
from zero_memory.store.base import Store, Tx


@dataclass(frozen=True, slots=True)
class HintResolution:
    """The scope a hint names; ``pending`` when it names a project a dry resolution did not create."""

    scope: str
    created: bool
    pending: bool = False


def looks_like_remote(hint: str) -> bool:
    return "://" in hint or (bool(SCP_REMOTE_RE.match(hint)) and not hint.startswith(("/", "~", ".")))


def looks_like_path(hint: str) -> bool:
    return hint.startswith(("/", "~", ".")) or os.sep in hint


def create_project(
    tx: Tx,
    owner: str,
    slug: str,
    *,
    path: str | None = None,
    remote: str | None = None,
    kind: ScopeKind = ScopeKind.PROJECT,
) -> Project:
    if not scopes.is_slug(slug):
        raise errors.validation(f"slug: {slug[:40]!r} is not a valid slug (lowercase letters, digits, - and _)")
    scope = scopes.Scope(kind, owner, slug).path
    if tx.get_project(scope) is not None:
        raise errors.conflict(f"project {scope} exists already")
    project = Project(
        scope=scope,
        owner=owner,
        kind=kind.value,
        slug=slug,
        path=normalize_path(path) if path else None,
        remote=normalize_remote(remote) if remote else None,
        created_at=utcnow(),
    )
    tx.add_project(project)
    tx.set_membership(scope, owner, Role.ADMIN.value, project.created_at)
    tx.add_audit(
        actor=owner,
        action="project.create",
        owner=owner,
        memory_ids=[],
        payload={"scope": scope, "path": project.path, "remote": project.remote},
        run_id=None,
        at=project.created_at,
    )
    return project


def grant(tx: Tx, actor: str, scope: str, user_id: str, role: str) -> None:
    project = tx.get_project(scope)
    members = {m.scope: m.role for m in tx.memberships(actor)}
    if project is None or scope not in members:
        raise errors.not_found(f"project {scope}")
    if members[scope] is not Role.ADMIN:
        raise errors.validation(f"scope: only an admin of {scope} can grant access")
    if role not in Role.__members__.values():
        raise errors.validation(f"role: expected reader, writer or admin, got {role[:20]!r}")
    if tx.get_user(user_id) is None:
        raise errors.not_found(f"user {user_id}")
    tx.set_membership(scope, user_id, role, utcnow())
    tx.add_audit(
        actor=actor,
        action="project.grant",
        owner=project.owner,
        memory_ids=[],
        payload={"scope": scope, "user": user_id, "role": role},
        run_id=None,
        at=utcnow(),
    )


def _pick(candidates: list[Project], vis: Visibility) -> Project | None:
    visible = [p for p in candidates if vis.can_read(p.scope)]
    own = [p for p in visible if p.owner == vis.uid]
    if own:
        return own[0]
    return visible[0] if len(visible) == 1 else None


def resolve_hint(tx: Tx, vis: Visibility, hint: str, *, auto_create: bool, dry: bool = False) -> HintResolution:
    """The project scope a hint names for this caller, creating one when allowed."""
    text = hint.strip()
    if not text or len(text) > 1_000 or "\x00" in text:
        raise errors.validation("project_hint: empty or malformed", subcode=errors.PROJECT_HINT_UNRESOLVABLE)
    if text.startswith(("proj.", "team.")):
        try:
            scopes.parse(text)
        except errors.ZMError:
            pass
        else:
            if vis.can_read(text):
                return HintResolution(text, created=False)
    if looks_like_remote(text):
        remote = normalize_remote(text)
        found = _pick(tx.find_projects(remote=remote), vis)
        if found:
            return HintResolution(found.scope, created=False)
        slug = scopes.slugify(remote.rsplit("/", 1)[-1])
        return _create_or_fail(tx, vis, slug, hint, auto_create, dry, remote=remote)
    if looks_like_path(text):
        return _resolve_path(tx, vis, normalize_path(text), hint, auto_create, dry)
    slug = scopes.slugify(text)
    found = _pick(tx.find_projects(slug=slug), vis)
    if found:
        return HintResolution(found.scope, created=False)
    return _create_or_fail(tx, vis, slug, hint, auto_create, dry)


def _resolve_path(tx: Tx, vis: Visibility, path: str, hint: str, auto_create: bool, dry: bool) -> HintResolution:
    found = _by_path(tx, vis, path)
    if found:
        return HintResolution(found.scope, created=False)
    if not os.path.isdir(path):
        # Not a directory of this machine (a remote client's path): its name is all there is to go by.
        slug = scopes.slugify(os.path.basename(path))
        return _create_or_fail(tx, vis, slug, hint, auto_create, dry, path=path)
    repository = find_repository(path)
    if repository is None:
        raise errors.validation(
            f"project_hint: {path[:120]!r} is in no git repository and names no project, so no project is "
            'made for it; pass scope "personal" for a memory of your own, or a repository\'s path',
            subcode=errors.PROJECT_HINT_UNRESOLVABLE,
        )
    found = _by_path(tx, vis, repository.root) if repository.root != path else None
    if found is None and repository.remote:
        found = _pick(tx.find_projects(remote=normalize_remote(repository.remote)), vis)
    if found:
        return HintResolution(found.scope, created=False)
    slug = scopes.slugify(os.path.basename(repository.root))
    return _create_or_fail(tx, vis, slug, hint, auto_create, dry, path=repository.root, remote=repository.remote)


def _by_path(tx: Tx, vis: Visibility, path: str) -> Project | None:
    """The project of a directory: one recorded at that path or the nearest ancestor."""
    probe = path
    while probe:
        found = _pick(tx.find_projects(path=probe), vis)
        if found:
            return found
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    return None


MAX_SLUG_SUFFIX = 100


def _create_or_fail(
    tx: Tx,
    vis: Visibility,
    slug: str,
    hint: str,
    auto_create: bool,
    dry: bool,
    *,
    path: str | None = None,
    remote: str | None = None,
) -> HintResolution:
    base = scopes.Scope(ScopeKind.PROJECT, vis.uid, slug).path
    if not dry and tx.get_project(base) is None:
        # Calls naming one new project at once would each insert it (PostgreSQL): the later ones wait here,
        # then find it below.
        tx.serialize(f"project:{base}")
    existing = tx.get_project(base)
    if existing is not None and (_same(existing, path, remote) or not (path or remote)):
        # The caller already has that project (or, for a name, a project of that name): the hint names it.
        return HintResolution(base, created=False)
    if not auto_create:
        raise errors.validation(
            f"project_hint: {hint[:80]!r} names no project of yours; create it with 'zm project create'",
            subcode=errors.PROJECT_HINT_UNRESOLVABLE,
        )
    if existing is not None:
        slug = _free_slug(tx, vis.uid, slug)
    scope = scopes.Scope(ScopeKind.PROJECT, vis.uid, slug).path
    if dry:
        return HintResolution(scope, created=False, pending=True)
    project = create_project(tx, vis.uid, slug, path=path, remote=remote)
    return HintResolution(project.scope, created=True)


def _same(project: Project, path: str | None, remote: str | None) -> bool:
    """Whether a project of the hint's slug is the hint's repository, or one that records no place at all
    (made by name, or by an older version): a store made before projects told repositories apart keeps its
    projects."""
    if project.path is None and project.remote is None:
        return True
    if remote and project.remote == normalize_remote(remote):
        return True
    return bool(path) and project.path == normalize_path(path or "")


def _free_slug(tx: Tx, owner: str, slug: str) -> str:
    """``slug-2``, ``slug-3``, ...: the first the owner has no project of (another repository of that name)."""
    for n in range(2, MAX_SLUG_SUFFIX):
        candidate = f"{slug[: 63 - len(str(n)) - 1]}-{n}"
        if tx.get_project(scopes.Scope(ScopeKind.PROJECT, owner, candidate).path) is None:
            return candidate
    raise errors.conflict(f"project: {MAX_SLUG_SUFFIX} projects named {slug!r} exist already; name this one")


# -- the project service: each opens its own transaction, for the edges (zm project) --------------------------


def create_project_as(
    store: Store,
    owner: str,
    slug: str,
    *,
    path: str | None = None,
    remote: str | None = None,
    kind: ScopeKind = ScopeKind.PROJECT,
) -> Project:
    """``create_project`` by its owner, in a transaction that acts as them."""
    with store.tx(write=True) as tx:
        tx.act_as(owner)
        return create_project(tx, owner, slug, path=path, remote=remote, kind=kind)


def projects_of(store: Store, uid: str) -> list[tuple[Project, str | None]]:
    """The projects a user can see, each with their role on it (None: readable without one)."""
    with store.tx() as tx:
        tx.act_as(uid)
        roles = {m.scope: m.role.value for m in tx.memberships(uid)}
        found = tx.list_projects(list(visibility(tx, uid).readable))
    return [(p, roles.get(p.scope)) for p in found]


def grant_as_operator(store: Store, actor: str, scope: str, user_id: str, role: str) -> None:
    """``grant`` from an operator's command: the grantee's membership row is not the actor's to write, so
    the transaction is a system one (``grant`` still checks that the actor is an admin of the scope)."""
    with system_tx(store, "operator", write=True) as tx:
        grant(tx, actor, scope, user_id, role)
