"""What "changes nothing" means: every table of the database, row by row, except the usage log.

A refused call is still a call: it records one usage event (docs/spec/tools.md), and
nothing else. ``snapshot`` reads every other table of the SQLite file — the
memories and their vectors, links, audit, disputes, judgements, sessions,
surfacings, projects, tokens, keys, runs, portability proposals — and hashes
each; two snapshots are equal exactly when no row of them changed.
"""

from __future__ import annotations

import hashlib
import sqlite3
from contextlib import closing
from pathlib import Path

# Usage events record every call, refused or not; the full-text index's shadow tables mirror ``memories``.
UNCOMPARED = ("usage_events", "memories_fts", "sqlite_")


def snapshot(database: Path) -> dict[str, str]:
    """Table name -> "<row count>:<digest of every row>"."""
    with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as conn:
        tables = [
            name
            for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not name.startswith(UNCOMPARED)
        ]
        state = {}
        for table in sorted(tables):
            rows = sorted(repr(row) for row in conn.execute(f'SELECT * FROM "{table}"'))
            digest = hashlib.sha256("\n".join(rows).encode("utf-8", "surrogatepass")).hexdigest()[:16]
            state[table] = f"{len(rows)}:{digest}"
    return state


def changed(before: dict[str, str], after: dict[str, str]) -> list[str]:
    return sorted(table for table in before.keys() | after.keys() if before.get(table) != after.get(table))
