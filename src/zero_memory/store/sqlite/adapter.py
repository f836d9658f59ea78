"""The embedded default: one SQLite file, WAL, FTS5, an in-process vector index.

Writers take ``BEGIN IMMEDIATE``, so several processes can write one file
without losing a write; readers never block them (WAL).
"""

from __future__ import annotations

import os
import socket
import sqlite3
import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np

from zero_memory.clock import to_text, utcnow
from zero_memory.domain.records import Membership
from zero_memory.store import migrations
from zero_memory.store.sql import SqlTx
from zero_memory.store.sqlite.empty_reads import EmptyReads
from zero_memory.store.sqlite.fulltext_reads import FullTextReads, counts_cache, postings_cache
from zero_memory.store.sqlite.index_files import IndexFiles
from zero_memory.store.sqlite.row_cache import RowCache
from zero_memory.store.sqlite.vector_index import ANN_MIN_ROWS, BACKGROUND_ROWS, EXACT_FILTER_ROWS, VectorIndex
from zero_memory.store.sqlite.vectors import SQLiteVectors
from zero_memory.store.sqlite.writers import Writers
from zero_memory.store.stems import stemmed

BUSY_TIMEOUT_MS = 60_000
CLOSE_SAVE_ROWS = 1_000  # unsaved index changes worth a snapshot when the store closes


class SQLiteTx(FullTextReads, SQLiteVectors, EmptyReads, SqlTx):
    def __init__(self, store: SQLiteStore, conn: sqlite3.Connection, *, write: bool, changes: int) -> None:
        self.store = store
        self.conn = conn
        self.dim = store.dim
        self._write = write
        self._changes = changes
        self._rev: int | None = None

    @property
    def index(self) -> VectorIndex:
        return self.store.index

    @property
    def row_cache(self) -> RowCache:
        return self.store.row_cache

    def committed_rev(self) -> int:
        """The change counter as this transaction sees it (read once: it cannot move under a transaction
        that writes nothing; ask only while ``read_only``)."""
        if self._rev is None:
            self._rev = _rev_counter(self.conn)
        return self._rev

    def read_only(self) -> bool:
        return not self._write and self.conn.total_changes == self._changes

    def serialize(self, key: str) -> None:
        """Nothing to do: BEGIN IMMEDIATE already serializes every writer of the file."""

    def act_as(self, uid: str) -> None:
        """Nothing to enforce: SQLite has no row-level security (the services' filters are the only ones)."""

    def act_as_member(self, uid: str) -> list[Membership]:
        return self.memberships(uid)

    def act_as_system(self, name: str) -> None:
        """Nothing to enforce: SQLite has no row-level security."""

    def _erasing(self) -> None:
        """Pages freed from here on are overwritten with zeros, not left in the file (account deletion)."""
        self.conn.execute("PRAGMA secure_delete = ON")

    def _erased(self) -> None:
        """FTS5 keeps a removed row's words (with a deletion marker) until its segments merge: merge them all."""
        self.conn.execute("INSERT INTO memories_fts(memories_fts) VALUES ('optimize')")

    def _exec(self, sql: str, params: Sequence[Any] = ()) -> int:
        return self.conn.execute(sql, tuple(params)).rowcount

    def _exec_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self.conn.executemany(sql, rows)

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        cursor = self.conn.execute(sql, tuple(params))
        names = [d[0] for d in cursor.description or ()]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def _embedding_param(self, vector: np.ndarray) -> Any:
        return np.ascontiguousarray(vector, dtype=np.float32).tobytes()

    def _vector_from_value(self, value: Any) -> np.ndarray:
        return np.frombuffer(value, dtype=np.float32).copy()


class SQLiteStore:
    backend = "sqlite"
    reads_in_server = False  # SQLite reads in this process, holding the GIL for most of a read

    def __init__(
        self,
        path: Path,
        *,
        dim: int,
        ann_min_rows: int = ANN_MIN_ROWS,
        exact_filter_rows: int = EXACT_FILTER_ROWS,
        background_rows: int = BACKGROUND_ROWS,
    ) -> None:
        self.path = path
        self.dim = dim
        # Large clusters are built on a thread of their own, reading the database in its own transactions.
        self.index = VectorIndex(
            dim,
            files=IndexFiles(path),
            ann_min_rows=ann_min_rows,
            exact_filter_rows=exact_filter_rows,
            read=self.tx,
            background_rows=background_rows,
        )
        self.counts = counts_cache()
        self.row_cache = RowCache()
        self.postings = postings_cache()
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        self._writers = Writers(path)
        self._holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        _LIVE_HOLDERS.add(self._holder)

    @classmethod
    def open(cls, url: str, *, dim: int = 512, migrate: bool = True, **index_options: int) -> SQLiteStore:
        """The store of a ``sqlite:///PATH`` URL; ``migrate=False`` leaves the schema as it is;
        ``index_options`` tune the vector index (tests, benchmarks)."""
        store = cls(sqlite_path(url), dim=dim, **index_options)
        store.path.parent.mkdir(parents=True, exist_ok=True)
        if migrate:
            store.migrate()
        return store

    # -- connections and transactions ------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
            )
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            # The full-text triggers index a memory's stems (migration 0025).
            conn.create_function("zm_stems", 1, stemmed, deterministic=True)
            self._local.conn = conn
            self._local.depth = 0
            self._local.tx = None
            with self._connections_lock:
                self._connections.append(conn)
        return conn

    @contextmanager
    def tx(self, *, write: bool = False) -> Iterator[SQLiteTx]:
        conn = self._connection()
        if self._local.depth > 0:
            # A nested transaction joins the outer one.
            self._local.depth += 1
            try:
                yield self._local.tx
            finally:
                self._local.depth -= 1
            return
        # Writers of every process wait their turn here, each woken the moment the one before commits,
        # rather than asleep in SQLite's busy handler (store/sqlite/writers.py).
        queued = write and self._writers.acquire(BUSY_TIMEOUT_MS / 1000)
        try:
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            # The counter as committed when this transaction began: a rollback rewinds the index to it.
            committed = _rev_counter(conn) if write else self.index.watermark
            tx = self._local.tx = SQLiteTx(self, conn, write=write, changes=conn.total_changes)
            self._local.depth = 1
            try:
                yield tx
            except BaseException:
                if not tx.read_only():
                    # The index may hold rows this transaction wrote: they are read again, as committed.
                    self.index.rewind(committed)
                conn.execute("ROLLBACK")
                raise
            else:
                conn.execute("COMMIT")
            finally:
                self._local.depth = 0
                self._local.tx = None
        finally:
            if queued:
                self._writers.release()

    @contextmanager
    def advisory_lock(self, name: str) -> Iterator[bool]:
        """A named lock shared by every process using the file; yields whether it was taken."""
        now = utcnow()
        with self.tx(write=True) as tx:
            tx._exec("DELETE FROM locks WHERE name = ? AND expires_at < ?", (name, to_text(now)))
            held = tx._query("SELECT holder FROM locks WHERE name = ?", (name,))
            if held and _holder_is_dead(held[0]["holder"]):
                tx._exec("DELETE FROM locks WHERE name = ? AND holder = ?", (name, held[0]["holder"]))
            taken = (
                tx._exec(
                    "INSERT INTO locks(name, holder, expires_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING",
                    (name, self._holder, to_text(now + timedelta(hours=6))),
                )
                > 0
            )
        try:
            yield taken
        finally:
            if taken:
                with self.tx(write=True) as tx:
                    tx._exec("DELETE FROM locks WHERE name = ? AND holder = ?", (name, self._holder))

    def migrate(self) -> list[str]:
        """Apply every migration not yet applied; safe when several processes start at once."""
        conn = self._connection()
        conn.execute("PRAGMA journal_mode = WAL")
        applied: list[str] = []
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                "applied_at TEXT NOT NULL)"
            )
            done = dict(conn.execute("SELECT version, name FROM schema_migrations").fetchall())
            for version, name, sql in migrations.pending("sqlite", done):
                for statement in _statements(sql):
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)",
                    (version, name, to_text(utcnow())),
                )
                applied.append(name)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return applied

    @contextmanager
    def bulk_load(self, rows: int) -> Iterator[None]:
        """Nothing to do: the vector index catches up with the loaded rows at the next search."""
        yield

    def save_index(self, *, at_least: int = 1) -> bool:
        """Save a snapshot of the vector index if it has ``at_least`` unsaved changes.

        The index catches up first: a snapshot never holds a vector whose row another process
        removed (account deletion) after this one last searched.
        """
        with self.tx() as tx:
            if self.index.loaded:
                self.index.refresh(tx)
            return self.index.save(tx, at_least=at_least)

    def load_index(self) -> None:
        """Read the index's snapshot (or start it from the rows) and catch it up, as the first search would."""
        with self.tx() as tx:
            self.index.refresh(tx)

    def wait_for_index(self, *, attempts: int = 3) -> None:
        """Bring the vector index up to the database and wait for clusters being built in the background
        (started again if it failed, up to ``attempts`` builds): searches use them from here on."""
        for _ in range(attempts):
            with self.tx() as tx:
                self.index.refresh(tx)
            if not self.index.building:
                return
            self.index.wait()
        with self.tx() as tx:
            self.index.refresh(tx)

    def purge_removed(self) -> None:
        """After rows were removed (account deletion): no copy of them stays beside the database.

        The index drops the removed vectors and replaces its snapshot with one without
        them, or, with no clusters to save, discards the snapshots; the write-ahead log,
        which still holds the removed pages, is checkpointed and truncated (as far as
        readers in other processes allow; SQLite reuses it either way).
        """
        with self.tx() as tx:
            self.index.refresh(tx)
            saved = self.index.save(tx, at_least=0)
        files = self.index.files
        if files is not None:
            newest = files.snapshots()[:1] if saved else []
            for snapshot in files.snapshots():
                if snapshot not in newest:
                    files.discard(snapshot)
        with suppress(sqlite3.Error):
            self._connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        with suppress(sqlite3.Error, OSError):
            self.save_index(at_least=CLOSE_SAVE_ROWS)
        self.index.stop()
        with self._connections_lock:
            for conn in self._connections:
                with suppress(sqlite3.ProgrammingError):
                    conn.close()
            self._connections.clear()
        self._writers.close()
        self._local = threading.local()
        _LIVE_HOLDERS.discard(self._holder)


def sqlite_path(url: str) -> Path:
    return Path(url.removeprefix("sqlite:///").removeprefix("sqlite://"))


def _rev_counter(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT value FROM counters WHERE name = 'rev'").fetchone()
    return int(row[0]) if row else 0


# The lock holders of the stores open in this process.
_LIVE_HOLDERS: set[str] = set()


def _holder_is_dead(holder: str) -> bool:
    """A lock row left by a process of this host that no longer runs (killed, crashed)."""
    host, _, rest = holder.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    if int(pid_text) == os.getpid():
        # Our own pid: a store of this process, or a dead process that had the same pid (a restarted
        # container's pid 1), whose nonce no store here carries.
        return holder not in _LIVE_HOLDERS
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _statements(script: str) -> Iterator[str]:
    """Split a script into statements, keeping trigger bodies whole."""
    buffer = ""
    for line in script.splitlines(keepends=True):
        if not buffer and (not line.strip() or line.lstrip().startswith("--")):
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            yield buffer.strip()
            buffer = ""
    if buffer.strip():
        yield buffer.strip()
