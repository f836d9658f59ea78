"""The ``store`` fixture: every contract test runs once on SQLite and once on PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import cast

import pytest

from tests.cli.conftest import zm  # noqa: F401  (fixture: zm, tests/cli/harness.py)
from tests.pg import PgServer, pg_server, pg_url  # noqa: F401  (fixtures)
from tests.store.factories import DIM, AsSystem
from zero_memory.store import Store, open_store
from zero_memory.store.postgres.adapter import PostgresStore


def sqlite_url(directory: Path) -> str:
    return f"sqlite:///{directory / 'zm.db'}"


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh database of each backend: a real file, or a new PostgreSQL database."""
    if request.param == "sqlite":
        yield sqlite_url(tmp_path)
        return
    server: PgServer = request.getfixturevalue("pg_server")
    url = server.fresh_url()
    yield url
    server.drop(url)


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    opened = open_store(store_url, dim=DIM)
    yield cast(Store, AsSystem(opened))
    opened.close()


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[Store]:
    opened = open_store(sqlite_url(tmp_path), dim=DIM)
    yield cast(Store, AsSystem(opened))
    opened.close()


@pytest.fixture
def pg(pg_url: str) -> Iterator[PostgresStore]:  # noqa: F811
    """PostgreSQL as the servers use it: no system pass unless a transaction names one (row security binds)."""
    opened = PostgresStore.open(pg_url, dim=DIM)
    yield opened
    opened.close()


@pytest.fixture
def pg_store(pg_url: str) -> Iterator[PostgresStore]:  # noqa: F811
    opened = PostgresStore.open(pg_url, dim=DIM)
    yield cast(PostgresStore, AsSystem(opened))
    opened.close()
