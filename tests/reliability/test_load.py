"""The short form of ``benchmarks/load.py``: eight MCP clients over HTTP for ten seconds, on each store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.pg import PgServer, pg_server  # noqa: F401  (fixtures)
from tests.reliability import load
from tests.reliability.service import deploy, running

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

CLIENTS = 8
SECONDS = 10
MIN_CALLS = 3  # the opening write of a shared text, then calls of the ordinary mix


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    if request.param == "sqlite":
        yield None
        return
    server: PgServer = request.getfixturevalue("pg_server")
    url = server.fresh_url()
    yield url
    server.drop(url)


def test_eight_clients_for_ten_seconds_lose_nothing_and_duplicate_nothing(
    tmp_path: Path, database_url: str | None
) -> None:
    service = deploy(tmp_path, database_url, users=("alice", "bob"))
    with running(service):
        log = load.run(service, clients=CLIENTS, seconds=SECONDS, users=["alice", "bob"], min_calls=MIN_CALLS)
        books = load.audit(service, log)
    summary = load.report(log, books)
    assert log.errors == [], log.errors[:5]
    assert books.lost == [] and books.duplicated == [] and books.inconsistent == [], summary["problems"]
    # The run did what it is meant to: every client's opening write of one shared text was absorbed but the
    # first of each user's, and calls kept coming after it.
    assert books.absorbed >= CLIENTS - 2 and books.created >= 2, summary
    assert summary["calls"] >= CLIENTS * MIN_CALLS, summary
