"""Numbered schema migrations, one folder per dialect.

A database records every version it applied (``schema_migrations``); the code
applies the ones missing, by set, so migrations written in parallel may land in
any order. A database that records a version this code does not have was
written by a newer release: opening it is refused rather than running old code
on a schema it does not know (there are no down migrations; restore a backup
taken before the upgrade instead).
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources

from zero_memory import __version__, errors


def scripts(dialect: str) -> list[tuple[int, str, str]]:
    """(version, name, sql) of every migration of a dialect, in order."""
    folder = resources.files(__name__).joinpath(dialect)
    found = []
    for entry in folder.iterdir():
        if entry.name.endswith(".sql"):
            version = int(entry.name.split("_", 1)[0])
            found.append((version, entry.name, entry.read_text(encoding="utf-8")))
    return sorted(found)


def pending(dialect: str, applied: Mapping[int, str]) -> list[tuple[int, str, str]]:
    """The migrations a database that applied ``applied`` (version → name) still needs, in order.

    Refuses a database newer than the code before anything is applied.
    """
    known = scripts(dialect)
    unknown = sorted(set(applied) - {version for version, _, _ in known})
    if unknown:
        names = ", ".join(applied[v] for v in unknown)
        raise errors.conflict(
            f"the database was migrated by a newer zero-memory (it has {names}, which {__version__} does not know); "
            "downgrading is not supported: run the newer release, or restore a backup taken before the upgrade"
        )
    return [(version, name, sql) for version, name, sql in known if version not in applied]
