"""Backing up and restoring a SQLite store (``zm db backup`` / ``zm db restore``).

Both go through SQLite's online backup API, page by page inside one read
transaction of the source: in WAL mode that transaction sees one committed
state while other connections keep writing, so the copy is consistent without
stopping the server. A backup is written beside its destination and renamed
into place once complete, so a failed one never leaves a half file under the
name asked for.

PostgreSQL has its own tools (pg_dump / pg_restore); these functions refuse a
PostgreSQL URL with the commands to use instead (docs/deployment.md).
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from zero_memory import errors
from zero_memory.store import migrations
from zero_memory.store.sqlite.adapter import sqlite_path
from zero_memory.store.sqlite.read import open_read_only

PG_BACKUP_HINT = (
    'for PostgreSQL use pg_dump: pg_dump --format=custom --file=zm.dump "$ZM_DATABASE_URL" '
    "(see docs/deployment.md, Backups)"
)
PG_RESTORE_HINT = (
    "for PostgreSQL use pg_restore into a new database: pg_restore --no-owner --dbname=NEW_URL zm.dump "
    "(see docs/deployment.md, Backups)"
)

# Rows in these tables make a store worth protecting from an accidental restore.
CONTENT_TABLES = ("users", "memories")


@dataclass(frozen=True, slots=True)
class BackupReport:
    path: str
    bytes: int
    schema: list[str]
    rows: dict[str, int]


def backup(url: str, destination: Path) -> BackupReport:
    """Copy the store at ``url`` to a new file ``destination`` while it stays in use."""
    if not url.startswith("sqlite:"):
        raise errors.validation(f"zm db backup copies SQLite stores; {PG_BACKUP_HINT}")
    source_path = sqlite_path(url)
    if destination.exists():
        raise errors.validation(f"PATH: {destination} exists; name a new file")
    if not destination.parent.is_dir():
        raise errors.validation(f"PATH: no directory {destination.parent}")
    partial = destination.with_name(f".{destination.name}.partial-{os.getpid()}")
    try:
        # The source only read (an operator may only be allowed to read it); a missing one is not_found.
        with closing(open_read_only(source_path)) as source, closing(_connect(partial)) as target:
            source.backup(target)
            # One self-contained file: no write-ahead log beside it.
            target.execute("PRAGMA journal_mode = DELETE")
            _check_integrity(target, destination)
            report = _describe(target, destination)
        partial.replace(destination)
    finally:
        partial.unlink(missing_ok=True)
    return BackupReport(str(destination), destination.stat().st_size, report.schema, report.rows)


def restore(url: str, source: Path, *, force: bool) -> BackupReport:
    """Replace the store at ``url`` with the backup ``source``; a non-empty store only with ``force``.

    The backup may come from an older release: opening the store afterwards
    migrates it. One from a newer release is refused before anything changes.
    """
    if not url.startswith("sqlite:"):
        raise errors.validation(f"zm db restore writes SQLite stores; {PG_RESTORE_HINT}")
    if not source.is_file():
        raise errors.not_found(f"backup file {source}")
    with closing(_connect(source)) as backup_conn:
        described = _describe_backup(backup_conn, source)
        target_path = sqlite_path(url)
        if target_path.resolve() == source.resolve():
            raise errors.validation("PATH: that is the store itself; name a backup file")
        target_path.parent.mkdir(parents=True, exist_ok=True)
        with closing(_connect(target_path)) as target:
            held = _content_rows(target)
            if held and not force:
                counts = ", ".join(f"{n} {table}" for table, n in held.items())
                raise errors.conflict(
                    f"the store at {target_path} is not empty ({counts}); stop its servers and pass --force "
                    "to replace it with the backup"
                )
            backup_conn.backup(target)
    return described


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=60, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 60000")
    return conn


def _check_integrity(conn: sqlite3.Connection, path: Path) -> None:
    result = [r[0] for r in conn.execute("PRAGMA integrity_check").fetchall()]
    if result != ["ok"]:
        raise errors.internal(f"the copy at {path} fails SQLite's integrity check ({'; '.join(result[:3])})")


def _describe_backup(conn: sqlite3.Connection, path: Path) -> BackupReport:
    """What a file to restore holds; refuses what is not a zero-memory store, or one newer than the code."""
    try:
        _check_integrity(conn, path)
        applied = dict(conn.execute("SELECT version, name FROM schema_migrations").fetchall())
    except (sqlite3.DatabaseError, errors.ZMError) as exc:
        raise errors.validation(f"PATH: {path} is not a zero-memory SQLite backup") from exc
    migrations.pending("sqlite", applied)
    return _describe(conn, path)


def _describe(conn: sqlite3.Connection, path: Path) -> BackupReport:
    """What a store file holds; ``bytes`` is filled in once the file is in place."""
    schema = [name for (name,) in conn.execute("SELECT name FROM schema_migrations ORDER BY version")]
    rows = {table: int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]) for table in CONTENT_TABLES}
    return BackupReport(str(path), path.stat().st_size if path.exists() else 0, schema, rows)


def _content_rows(conn: sqlite3.Connection) -> dict[str, int]:
    present = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return {
        table: n
        for table in CONTENT_TABLES
        if table in present and (n := int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]))
    }
