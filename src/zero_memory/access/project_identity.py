"""The cross-project predicate: one deterministic function wherever a pair can form.

A memory's project identity comes from provenance, never from its text: a
project (or team) scope pins it to that scope, which already carries the
owner's namespace; an imported memory outside a project scope is pinned to
the directory it was imported from (or to the project whose path holds that
directory). Anything else is unresolved. A pair is skipped only when both
sides resolve and differ.

Agents keep per-project folders named after the repository's path: Claude
Code's ``~/.claude/projects/-home-u-repos-shop/`` is ``/home/u/repos/shop``
with every character other than a letter or digit replaced by ``-``. Such a
name cannot be decoded (``repos-shop`` or ``repos/shop``?), so the registered
projects' paths are encoded the same way and compared: a folder whose name is
the encoding of exactly one of them resolves to that project. An agent folder
that names no registered project, or several, is unresolved: it is judged,
never skipped as cross-project.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from itertools import pairwise
from pathlib import PurePath

from zero_memory.access.visibility import visibility
from zero_memory.domain.memory import Memory
from zero_memory.store.base import Tx

Identity = tuple[str, str]


def project_identity(memory: Memory, project_paths: Mapping[str, str] | None = None) -> Identity | None:
    """``("scope", path)`` or ``("dir", directory)``, or None when unresolved.

    ``project_paths`` maps a project's repository path to its scope, so an
    import from inside a known project's directory resolves to that project.
    """
    if memory.scope.startswith(("proj.", "team.")):
        return ("scope", memory.scope)
    imported_from = memory.source.get("imported_from")
    if not imported_from:
        return None
    directory = str(imported_from).rstrip(os.sep) or os.sep
    paths = project_paths or {}
    folders = PurePath(directory).parts
    encoded = _encoded_paths(paths)
    for folder in reversed(folders):
        named = encoded.get(folder) if AGENT_FOLDER_RE.match(folder) else None
        if named:
            return ("scope", next(iter(named))) if len(named) == 1 else None
    # The deepest project holding the directory, as a path hint would resolve it.
    for path, scope in sorted(paths.items(), key=lambda item: -len(item[0])):
        if directory == path or directory.startswith(path.rstrip(os.sep) + os.sep):
            return ("scope", scope)
    if _inside_agent_project_folder(folders):
        return None
    return ("dir", directory)


def encoded_folder_names(path: str) -> set[str]:
    """The names an agent gives its folder for the repository at ``path``.

    Claude Code replaces every character other than an ASCII letter or digit with ``-``; a plain
    ``/`` → ``-`` replacement is accepted too.
    """
    path = path.rstrip("/\\") or path
    return {path.replace("/", "-"), re.sub(r"[^A-Za-z0-9]", "-", path)}


def _encoded_paths(project_paths: Mapping[str, str]) -> dict[str, set[str]]:
    encoded: dict[str, set[str]] = {}
    for path, scope in project_paths.items():
        for name in encoded_folder_names(path):
            encoded.setdefault(name, set()).add(scope)
    return encoded


AGENT_FOLDER_RE = re.compile(r"^(-|[A-Za-z]--)[^/\\]+$")


def _inside_agent_project_folder(folders: tuple[str, ...]) -> bool:
    """An agent's per-project folder: a ``projects/<encoded path>`` component (``-home-…``, ``C--Users-…``)."""
    return any(parent == "projects" and AGENT_FOLDER_RE.match(name) for parent, name in pairwise(folders))


def different_projects(a: Memory, b: Memory, project_paths: Mapping[str, str] | None = None) -> bool:
    left = project_identity(a, project_paths)
    right = project_identity(b, project_paths)
    return left is not None and right is not None and left != right


def project_paths(tx: Tx, owner: str) -> dict[str, str]:
    """Repository path → project scope among the owner's projects, so imports from inside one resolve to it.

    When two visible projects share a path, the owner's own project wins.
    """
    readable = visibility(tx, owner).readable
    projects = [p for p in tx.list_projects(readable) if p.path]
    projects.sort(key=lambda p: p.owner == owner)
    return {p.path: p.scope for p in projects if p.path}
