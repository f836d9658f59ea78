"""Projects, membership, and resolving a project hint.

A hint is a repository path, a git remote URL, or a project name. It resolves
among the projects the caller can see; when none matches, a project is created
for the caller (slug from the directory or remote name) unless
``ZM_AUTO_CREATE_PROJECTS=0``.
"""

from __future__ import annotations

import configparser
import os
from dataclasses import dataclass
from pathlib import Path

from zero_memory import errors
from zero_memory.clock import utcnow
from zero_memory.domain import scopes
from zero_memory.domain.records import Project, Visibility
from zero_memory.domain.remotes import SCP_REMOTE_RE, normalize_remote
from zero_memory.domain.scopes import Role, ScopeKind
from zero_memory.store.base import Tx


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


def normalize_path(path: str) -> str:
    return str(Path(os.path.expanduser(path)).absolute()).rstrip(os.sep) or os.sep


def git_remote_of(path: str) -> str | None:
    """The origin remote of a repository directory, read from .git/config when it exists."""
    config_path = Path(path) / ".git" / "config"
    if not config_path.is_file():
        return None
    parser = configparser.ConfigParser(strict=False)
    try:
        parser.read(config_path, encoding="utf-8")
    except (configparser.Error, OSError, UnicodeDecodeError):
        return None
    for section in ('remote "origin"', *[s for s in parser.sections() if s.startswith("remote ")]):
        if parser.has_option(section, "url"):
            return parser.get(section, "url")
    return None


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
        path = normalize_path(text)
        probe = path
        while probe:
            found = _pick(tx.find_projects(path=probe), vis)
            if found:
                return HintResolution(found.scope, created=False)
            parent = os.path.dirname(probe)
            if parent == probe:
                break
            probe = parent
        repo_remote = git_remote_of(path)
        if repo_remote:
            found = _pick(tx.find_projects(remote=normalize_remote(repo_remote)), vis)
            if found:
                return HintResolution(found.scope, created=False)
        slug = scopes.slugify(os.path.basename(path))
        return _create_or_fail(tx, vis, slug, hint, auto_create, dry, path=path, remote=repo_remote)
    slug = scopes.slugify(text)
    found = _pick(tx.find_projects(slug=slug), vis)
    if found:
        return HintResolution(found.scope, created=False)
    return _create_or_fail(tx, vis, slug, hint, auto_create, dry)


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
    scope = scopes.Scope(ScopeKind.PROJECT, vis.uid, slug).path
    if not dry and tx.get_project(scope) is None:
        # Calls naming one new project at once would each insert it (PostgreSQL): the later ones wait here,
        # then find it below.
        tx.serialize(f"project:{scope}")
    if tx.get_project(scope) is not None:
        # The caller already has a project of that name: the hint names it.
        return HintResolution(scope, created=False)
    if not auto_create:
        raise errors.validation(
            f"project_hint: {hint[:80]!r} names no project of yours; create it with 'zm project create'",
            subcode=errors.PROJECT_HINT_UNRESOLVABLE,
        )
    if dry:
        return HintResolution(scope, created=False, pending=True)
    project = create_project(tx, vis.uid, slug, path=path, remote=remote)
    return HintResolution(project.scope, created=True)
