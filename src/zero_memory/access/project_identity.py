"""The cross-project predicate: one deterministic function wherever a pair can form.

A memory's project identity comes from provenance, never from its text: a
project (or team) scope pins it to that scope, which already carries the
owner's namespace; an imported memory outside a project scope is pinned to
the directory it was imported from (or to the project whose path holds that
directory). Anything else is unresolved. A pair is skipped only when both
sides resolve and differ.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

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
    # The deepest project holding the directory, as a path hint would resolve it.
    for path, scope in sorted((project_paths or {}).items(), key=lambda item: -len(item[0])):
        if directory == path or directory.startswith(path.rstrip(os.sep) + os.sep):
            return ("scope", scope)
    return ("dir", directory)


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
