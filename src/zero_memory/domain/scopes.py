"""Scope paths and the rules that read them.

``user.<uid>`` a person's root, ``user.<uid>.core`` portable knowledge,
``proj.<uid>.<slug>`` a project, ``team.<uid>.<slug>`` a shared team scope.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from zero_memory import errors

SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")


class ScopeKind(StrEnum):
    PERSONAL = "personal"
    CORE = "core"
    PROJECT = "proj"
    TEAM = "team"


class Role(StrEnum):
    READER = "reader"
    WRITER = "writer"
    ADMIN = "admin"


ROLE_CAN_WRITE = frozenset({Role.WRITER, Role.ADMIN})


@dataclass(frozen=True, slots=True)
class Scope:
    kind: ScopeKind
    uid: str
    slug: str | None = None

    @property
    def path(self) -> str:
        if self.kind is ScopeKind.PERSONAL:
            return f"user.{self.uid}"
        if self.kind is ScopeKind.CORE:
            return f"user.{self.uid}.core"
        return f"{self.kind.value}.{self.uid}.{self.slug}"

    @property
    def shared(self) -> bool:
        """Project and team scopes are shared through membership."""
        return self.kind in (ScopeKind.PROJECT, ScopeKind.TEAM)


def slugify(text: str) -> str:
    """A slug from a directory or repository name: lowercase, dashes, no dots."""
    slug = re.sub(r"[^a-z0-9_-]+", "-", text.strip().lower()).strip("-_")
    return slug[:63] or "project"


def is_slug(text: str) -> bool:
    return bool(SLUG_RE.match(text))


def parse(path: str) -> Scope:
    """Parse a full scope path, or raise ``validation_failed``."""
    parts = path.split(".")
    if len(parts) == 2 and parts[0] == "user" and is_slug(parts[1]):
        return Scope(ScopeKind.PERSONAL, parts[1])
    if len(parts) == 3 and parts[0] == "user" and parts[2] == "core" and is_slug(parts[1]):
        return Scope(ScopeKind.CORE, parts[1])
    if len(parts) == 3 and parts[0] in ("proj", "team") and is_slug(parts[1]) and is_slug(parts[2]):
        return Scope(ScopeKind(parts[0]), parts[1], parts[2])
    raise errors.validation(f"scope: not a scope path: {path[:80]!r}")


def personal(uid: str) -> str:
    return f"user.{uid}"


def core(uid: str) -> str:
    return f"user.{uid}.core"


def is_core(path: str) -> bool:
    return path.startswith("user.") and path.endswith(".core")
