"""The scale-out store: PostgreSQL with pgvector.

The queries are the shared ones in ``sql.py``; this adapter adds vector search
(an HNSW cosine index per embedding dimension), full text (a generated
``tsvector`` and its words' postings, ``memory_words``), advisory locks and a
connection pool. Several processes can share one database: writers that must
not race call ``Tx.serialize(key)``, named locks are ``pg_try_advisory_lock``
on a connection of their own, and migrating takes an advisory lock so
processes starting at once apply each step once.

The transaction is in ``tx.py``, its vector search in ``vectors.py``, the checks of the
server it connects to in ``checks.py``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any, TypeVar

import psycopg
from pgvector.psycopg import register_vector
from psycopg import IsolationLevel
from psycopg.rows import dict_row
from psycopg.sql import SQL, Literal
from psycopg_pool import ConnectionPool

from zero_memory import errors
from zero_memory.clock import to_text, utcnow
from zero_memory.store import migrations
from zero_memory.store.postgres.checks import ensure_pgvector, warn_if_policies_bypassed
from zero_memory.store.postgres.locks import MIGRATION_LOCK, NAMED_LOCKS, lock_key
from zero_memory.store.postgres.postings import KeptPostings
from zero_memory.store.postgres.tx import Acting, PostgresTx
from zero_memory.store.postgres.vectors import EXACT_SEARCH_ROWS, Snapshot

log = logging.getLogger(__name__)
T = TypeVar("T")
R = TypeVar("R")

# A search whose filters had more candidates than the exact-search bound walks the index without
# counting them again for this long (counting 2,001 rows under the row policy took ~1 ms of a 100k
# recall). A set of scopes that shrank below the bound meanwhile is walked, with the iterative scan,
# rather than scanned exactly, until then, unless the walk comes back with fewer rows than it
# fetched: then they are counted again. At most this many filters are remembered.
WALK_MEMO_S = 10.0
WALK_MEMO_KEYS = 10_000

# How long the common words read from the planner's statistics are kept (full text).
COMMON_WORDS_TTL_S = 600.0
COMMON_WORDS_SAMPLE = 30_000  # rows, as ANALYZE samples at the default statistics target
COMMON_WORDS_MIN_SHARE = 0.001  # rarer words are counted through the index (at most POSTINGS_BUDGET rows)

# A load of at least this many memories, and more than the store holds, drops the HNSW index
# and builds it once afterwards: pgvector updates the graph on every insert (measured: 1,000 inserts of
# 512 dimensions ran at 460/s with the index, 1,880/s without it).
BULK_MIN_ROWS = 5_000
# Memory for building the HNSW index: the build is much faster when the graph fits (pgvector's advice).
BUILD_MEMORY_MB = 1_024


class PostgresStore:
    backend = "postgres"
    reads_in_server = True  # the server reads; psycopg waits on the socket without the GIL

    def __init__(
        self, url: str, *, dim: int, max_connections: int = 10, exact_search_rows: int = EXACT_SEARCH_ROWS
    ) -> None:
        self.url = url
        self.dim = dim
        self.exact_search_rows = exact_search_rows
        self._local = threading.local()
        self._common: tuple[float, dict[str, float]] | None = None
        self._walks: dict[tuple[Any, ...], float] = {}
        self.postings = KeptPostings()  # full text's postings between recalls
        self._pool = ConnectionPool(
            url,
            min_size=1,
            max_size=max_connections,
            kwargs={"autocommit": True, "row_factory": dict_row},
            configure=register_vector,
            # A connection the server dropped (a restart, a failover) is replaced when its BEGIN fails
            # (``_begun``), instead of failing the request that drew it.
            open=False,
            name="zero-memory",
        )

    @classmethod
    def open(
        cls,
        url: str,
        *,
        dim: int = 512,
        max_connections: int = 10,
        exact_search_rows: int = EXACT_SEARCH_ROWS,
    ) -> PostgresStore:
        store = cls(url, dim=dim, max_connections=max_connections, exact_search_rows=exact_search_rows)
        # Migrate before the pool opens: each pooled connection looks up the vector type.
        store.migrate()
        store._pool.open(wait=True, timeout=30)
        return store

    def _connect(self, *, read_only: bool = False) -> psycopg.Connection[dict[str, Any]]:
        """A connection of its own, outside the pool: for migrations and named locks; ``read_only``: every
        transaction of it is READ ONLY, so the server refuses any write made through it."""
        url = self.url
        if read_only:
            # Added to the URL's own options rather than replacing them.
            own = psycopg.conninfo.conninfo_to_dict(url).get("options") or ""
            url = psycopg.conninfo.make_conninfo(url, options=f"{own} -c default_transaction_read_only=on".strip())
        try:
            return psycopg.connect(url, autocommit=True, row_factory=dict_row)
        except psycopg.OperationalError as exc:
            reason = (str(exc).strip() or type(exc).__name__).splitlines()[0]
            raise errors.unavailable(
                f"cannot connect to PostgreSQL ({reason}); check ZM_DATABASE_URL and that the server is up"
            ) from exc

    # -- transactions and locks --------------------------------------------------

    @contextmanager
    def tx(self, *, write: bool = False) -> Iterator[PostgresTx]:
        """One pooled connection, one transaction; a nested ``tx()`` on this thread joins it.

        A read transaction sees one snapshot throughout (REPEATABLE READ), as a
        SQLite reader does. A write transaction is READ COMMITTED: row locks order
        concurrent writers, and a check-then-write that must not race takes
        ``serialize`` (SQLite serializes every writer of the file instead).
        """
        outer: psycopg.Connection[dict[str, Any]] | None = getattr(self._local, "conn", None)
        if outer is not None:
            yield PostgresTx(self, outer)
            return
        with self._begun(None if write else IsolationLevel.REPEATABLE_READ) as conn:
            self._local.conn = conn
            # Transaction-local settings end with the transaction; so does this record of them.
            self._local.acting = Acting()
            try:
                yield PostgresTx(self, conn)
            finally:
                self._local.conn = None
                self._local.acting = Acting()

    @contextmanager
    def _begun(self, isolation: IsolationLevel | None) -> Iterator[psycopg.Connection[dict[str, Any]]]:
        """A pooled connection in a transaction of ``isolation`` (None: the server's default), committed when
        the block ends, rolled back when it raises.

        The transaction's BEGIN is the check that the connection still works: a connection the server
        dropped meanwhile (a restart, a failover, an idle timeout) fails it before anything of the
        transaction ran, and the pool replaces it while the next one is tried. The pool does not check
        each connection it hands out with an empty statement of its own: that was a round trip more in
        every transaction (one of a recall's thirteen, 0.1-0.3 ms each at 100,000 memories)."""
        for attempt in range(self._pool.max_size + 1):
            with ExitStack() as held:
                conn = held.enter_context(self._pool.connection())
                if conn.isolation_level != isolation:  # set at BEGIN: BEGIN ISOLATION LEVEL ...
                    conn.isolation_level = isolation
                try:
                    held.enter_context(conn.transaction())
                except psycopg.OperationalError:
                    # Closed (broken) by now: the pool discards it when the block returns it.
                    if not conn.closed or attempt == self._pool.max_size:
                        raise
                    log.info("a pooled connection was dropped by the server; trying another")
                    continue
                yield conn
                return

    def in_snapshot(self, snapshot: Snapshot, work: Callable[[psycopg.Connection[dict[str, Any]], T], R], arg: T) -> R:
        """``work(conn, arg)`` on another pooled connection, in a read transaction that sees ``snapshot`` and
        acts as its transaction did; the exporting transaction must stay open until this returns."""
        with self._begun(IsolationLevel.REPEATABLE_READ) as conn, conn.pipeline():  # the settings in one round trip
            conn.execute(SQL("SET TRANSACTION SNAPSHOT {}").format(Literal(snapshot.id)))
            conn.execute(
                "SELECT set_config('zm.system', %s, true), set_config('zm.caller', %s, true)",
                (snapshot.system, snapshot.caller),
            )
            return work(conn, arg)

    def walked_lately(self, key: tuple[Any, ...]) -> bool:
        """Whether a search with these filters (scopes, owner, kinds) walked the index within
        ``WALK_MEMO_S``: its candidates were above the exact-search bound, and the next search walks
        without counting them again."""
        at = self._walks.get(key)
        return at is not None and time.monotonic() - at < WALK_MEMO_S

    def note_walk(self, key: tuple[Any, ...]) -> None:
        if len(self._walks) >= WALK_MEMO_KEYS:
            self._walks.clear()
        self._walks[key] = time.monotonic()

    def forget_walk(self, key: tuple[Any, ...]) -> None:
        self._walks.pop(key, None)

    def acting(self) -> Acting:
        """Whom this thread's open transaction acts for."""
        acting: Acting | None = getattr(self._local, "acting", None)
        if acting is None:
            acting = self._local.acting = Acting()
        return acting

    @contextmanager
    def advisory_lock(self, name: str) -> Iterator[bool]:
        """A named lock shared by every process using the database; yields whether it was taken.

        Held by a connection of its own for the whole block, so a process that
        dies releases it with its connection.
        """
        conn = self._connect()
        try:
            row = conn.execute("SELECT pg_try_advisory_lock(%s, %s) AS taken", (NAMED_LOCKS, lock_key(name))).fetchone()
            taken = bool(row and row["taken"])
            try:
                yield taken
            finally:
                if taken and not conn.closed:
                    conn.execute("SELECT pg_advisory_unlock(%s, %s)", (NAMED_LOCKS, lock_key(name)))
        finally:
            conn.close()

    # -- schema ------------------------------------------------------------------------

    def migrate(self) -> list[str]:
        """Apply every migration not yet applied; safe when several processes start at once."""
        applied: list[str] = []
        # Closing the connection releases the lock, on success or failure alike.
        with self._connect() as conn:
            # A migration that reads or changes rows must see them all (row-level security, 0009).
            conn.execute("SELECT set_config('zm.system', 'migrate', false)")
            conn.execute("SELECT pg_advisory_lock(%s, %s)", MIGRATION_LOCK)
            ensure_pgvector(conn)
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
                'name TEXT COLLATE "C" NOT NULL, applied_at TEXT COLLATE "C" NOT NULL)'
            )
            done = {r["version"]: r["name"] for r in conn.execute("SELECT version, name FROM schema_migrations")}
            for version, name, script in migrations.pending("postgres", done):
                with conn.transaction():
                    conn.execute(script)
                    conn.execute(
                        "INSERT INTO schema_migrations(version, name, applied_at) VALUES (%s, %s, %s)",
                        (version, name, to_text(utcnow())),
                    )
                applied.append(name)
            self._ensure_vector_index(conn)
            warn_if_policies_bypassed(conn)
        return applied

    def pending_migrations(self) -> list[str]:
        """The migrations ``migrate()`` would apply, read in read-only transactions."""
        with self._connect(read_only=True) as conn:
            row = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL AS present").fetchone()
            done: dict[int, str] = {}
            if row and row["present"]:
                done = {r["version"]: r["name"] for r in conn.execute("SELECT version, name FROM schema_migrations")}
        return [name for _, name, _ in migrations.pending("postgres", done)]

    @property
    def vector_index_name(self) -> str:
        return f"memories_embedding_hnsw_{int(self.dim)}"

    def _ensure_vector_index(self, conn: psycopg.Connection[dict[str, Any]]) -> None:
        """Create the HNSW index if it is missing: at every start, so a bulk load that died after dropping
        it (``bulk_load``) leaves a store whose next start has it again. Searches meanwhile are exact."""
        dim = int(self.dim)
        row = conn.execute("SELECT to_regclass(%s) IS NOT NULL AS present", (self.vector_index_name,)).fetchone()
        if row and row["present"]:
            return
        started = time.monotonic()
        current = conn.execute("SELECT setting::int / 1024 AS mb FROM pg_settings WHERE name = 'maintenance_work_mem'")
        found = current.fetchone()
        if found is not None and int(found["mb"]) < BUILD_MEMORY_MB:
            conn.execute(f"SET maintenance_work_mem = '{BUILD_MEMORY_MB}MB'")
        # Not CONCURRENTLY: a build that dies leaves no index (rolled back), never an invalid one that
        # IF NOT EXISTS would take for built; writers wait for the build, searches do not.
        conn.execute(
            f"CREATE INDEX IF NOT EXISTS {self.vector_index_name} ON memories "
            f"USING hnsw ((embedding::vector({dim})) vector_cosine_ops) WHERE embedding_dim = {dim}"
        )
        conn.execute("RESET maintenance_work_mem")
        elapsed = time.monotonic() - started
        if elapsed > 1.0:
            log.info("built the vector index %s in %.1f s", self.vector_index_name, elapsed)

    @contextmanager
    def bulk_load(self, rows: int) -> Iterator[None]:
        """Load about ``rows`` memories with the HNSW index dropped, then build it once.

        Only for a load of at least ``BULK_MIN_ROWS`` memories and more than the store holds
        (a smaller one costs less row by row than rebuilding the graph of what is there), and analyses
        the tables afterwards. The drop commits before the load: searches meanwhile are exact, and a
        process that dies mid-load leaves a store that still recalls, whose next start (``migrate``)
        builds the index again.
        """
        dropped = rows >= BULK_MIN_ROWS and self._drop_vector_index(rows)
        try:
            yield
        finally:
            if dropped:
                with self._connect() as conn:
                    self._ensure_vector_index(conn)
                    # The planner's statistics, now rather than at autovacuum's next visit: without them it
                    # walked a whole scope's index to find a word's rows (full text at 100,000 memories:
                    # 131-196 ms, 37 ms through the full-text index once analysed).
                    conn.execute("ANALYZE")
                self._common = None

    def _drop_vector_index(self, rows: int) -> bool:
        with self._connect() as conn:
            conn.execute("SELECT set_config('zm.system', 'bulk-load', false)")
            found = conn.execute("SELECT count(*) AS n FROM memories").fetchone()
            if found is None or int(found["n"]) >= rows:
                return False
            try:
                conn.execute(f"DROP INDEX IF EXISTS {self.vector_index_name}")
            except psycopg.errors.InsufficientPrivilege:
                log.warning("bulk load: may not drop %s; it is kept up row by row", self.vector_index_name)
                return False
        log.info("bulk load of %d memories: the vector index is built after it", rows)
        return True

    def common_words(self, conn: psycopg.Connection[dict[str, Any]]) -> dict[str, float]:
        """The most common words of the stored texts, each with the share of memories holding it.

        From a sample of about ``COMMON_WORDS_SAMPLE`` rows (``zm_common_words``,
        migration 0009: pg_stats shows nothing of a table under row-level
        security), read again every ``COMMON_WORDS_TTL_S`` seconds; empty
        before the table was first analysed (ANALYZE or autovacuum). ``conn``
        acts as a system pass (0021: the counts answer no user's transaction).
        """
        now = time.monotonic()
        cached = self._common
        if cached is not None and now - cached[0] < COMMON_WORDS_TTL_S:
            return cached[1]
        rows = conn.execute(
            "SELECT word, share FROM zm_common_words(%s, %s)", (COMMON_WORDS_SAMPLE, COMMON_WORDS_MIN_SHARE)
        ).fetchall()
        words = {r["word"]: float(r["share"]) for r in rows}
        self._common = (now, words)
        return words

    def load_index(self) -> None:
        """Nothing to load: pgvector's index lives in the server."""

    def wait_for_index(self) -> None:
        """Nothing to wait for: pgvector's index is maintained with the table."""

    def purge_removed(self) -> None:
        """After rows were removed (account deletion): vacuum the memories, so their dead row versions
        and HNSW index entries go now rather than at autovacuum's next visit.

        VACUUM needs the table's owner (the servers' role, docs/deployment.md); under another
        role PostgreSQL skips it with a warning and autovacuum does it later.
        """
        with self._connect() as conn:
            conn.execute("VACUUM memories")

    def close(self) -> None:
        self._pool.close()
