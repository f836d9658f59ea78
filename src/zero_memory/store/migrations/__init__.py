"""Numbered schema migrations, one folder per dialect."""

from __future__ import annotations

from importlib import resources


def scripts(dialect: str) -> list[tuple[int, str, str]]:
    """(version, name, sql) of every migration of a dialect, in order."""
    folder = resources.files(__name__).joinpath(dialect)
    found = []
    for entry in folder.iterdir():
        if entry.name.endswith(".sql"):
            version = int(entry.name.split("_", 1)[0])
            found.append((version, entry.name, entry.read_text(encoding="utf-8")))
    return sorted(found)
