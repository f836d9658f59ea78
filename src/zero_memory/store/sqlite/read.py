"""Reading a SQLite file without changing it: ``zm db migrate --check`` and the source of ``zm db backup``.

Opening the store to use it is not that: it creates a missing file (and its
folder), switches the file to WAL, and migrates. An operator checking a file
may only be allowed to read it, or may have mistyped its path, so this
connection opens the file read-only (``mode=ro``) and a missing file is
refused rather than created.

A file in WAL mode that no connection has open has no ``-wal`` beside it, and
a read-only connection that finds none creates the ``-wal`` and ``-shm`` files
and cannot remove them when it closes (only a writer checkpoints); in a folder
the reader may not write to it cannot open the file at all. Such a file is
read as immutable: with no ``-wal``, the main file holds every committed
transaction. A file with a ``-wal`` (a server has it open) is read through its
log as usual, which creates nothing.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from zero_memory import errors

HEADER = b"SQLite format 3\x00"
BUSY_TIMEOUT_MS = 60_000
WAL_VERSIONS = b"\x02\x02"  # the file format's write and read versions (bytes 18 and 19) in WAL mode


def open_read_only(path: Path) -> sqlite3.Connection:
    """A connection that cannot write ``path``; refuses (``not_found:``) a file that is not there."""
    if not path.is_file():
        raise errors.not_found(f"SQLite database at {path}; check ZM_DATABASE_URL (nothing was created)")
    try:
        with path.open("rb") as file:
            header = file.read(20)
    except OSError as exc:
        raise errors.unavailable(f"cannot read {path} ({exc.strerror}); check its permissions") from exc
    if header and not header.startswith(HEADER):
        raise errors.validation(f"{path} is not a SQLite database; check ZM_DATABASE_URL")
    logless = header[18:20] == WAL_VERSIONS and not Path(f"{path}-wal").exists()
    uri = f"{path.absolute().as_uri()}?mode=ro" + ("&immutable=1" if logless else "")
    try:
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA query_only = ON")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as exc:
        raise errors.unavailable(f"cannot read the SQLite database at {path} ({exc}); check its permissions") from exc
    return conn


def applied_migrations(path: Path) -> dict[int, str]:
    """The migrations the file records (version → name), read without changing it."""
    conn = open_read_only(path)
    try:
        present = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
        if present.fetchone() is None:
            return {}
        return dict(conn.execute("SELECT version, name FROM schema_migrations").fetchall())
    except sqlite3.DatabaseError as exc:
        raise errors.unavailable(f"cannot read the SQLite database at {path} ({exc})") from exc
    finally:
        conn.close()
