"""Races the load test found, pinned down in process: many threads, one store, the same step at once."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from tests.pg import pg_server, pg_url  # noqa: F401  (fixtures)
from zero_memory.access.projects import resolve_hint
from zero_memory.access.users import add_user
from zero_memory.access.visibility import visibility
from zero_memory.store import Store, open_store, system_tx

THREADS = 8
ROUNDS = 10


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: object) -> Iterator[Store]:
    url = f"sqlite:///{tmp_path}/zm.db" if request.param == "sqlite" else request.getfixturevalue("pg_url")
    opened = open_store(url, dim=16)
    with system_tx(opened, "test", write=True) as tx:
        add_user(tx, "alice")
    yield opened
    opened.close()


def test_one_new_project_hint_sent_by_many_calls_at_once_creates_one_project(store: Store) -> None:
    """Eight sessions name a new repository in the same instant: all of them land in one project.

    On PostgreSQL each call used to look the project up, find nothing and
    insert it; all but one failed on the primary key (an ``internal`` error
    for the agent, seen under ``benchmarks/load.py``).
    """
    failures: list[BaseException] = []
    scopes: list[str] = []

    for round_ in range(ROUNDS):
        hint = f"/srv/repos/race-{round_}"
        start = threading.Barrier(THREADS)

        def resolve(hint: str = hint, start: threading.Barrier = start) -> None:
            try:
                start.wait(timeout=10)
                with system_tx(store, "test", write=True) as tx:
                    vis = visibility(tx, "alice")
                    scopes.append(resolve_hint(tx, vis, hint, auto_create=True).scope)
            except BaseException as error:  # collected and reported below
                failures.append(error)

        threads = [threading.Thread(target=resolve) for _ in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)

    assert failures == []
    assert len(scopes) == THREADS * ROUNDS
    assert len(set(scopes)) == ROUNDS
    with system_tx(store, "test") as tx:
        assert len([p for p in tx.list_projects() if p.slug.startswith("race-")]) == ROUNDS
