"""PostgreSQL only: a bulk load (an import, ``zm db copy``) builds the HNSW index after the rows, once.

The index is dropped before the load (committed), so searches meanwhile are
exact, and built when the load ends; a process that dies mid-load leaves a
store that still recalls every live memory, and the next start builds the
index again.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from tests.store.conftest import sqlite_url
from tests.store.factories import DIM, AsSystem, add_users, memory, put
from tests.store.processes import kill, writer
from tests.store.writer import vector_for
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.memory.imports import count_records, import_path
from zero_memory.store import open_store, system_tx
from zero_memory.store.copy import copy_store
from zero_memory.store.postgres.adapter import PostgresStore


def has_index(store: PostgresStore) -> bool:
    with store.tx() as tx:
        row = tx._query("SELECT to_regclass(?) IS NOT NULL AS present", [store.vector_index_name])[0]
    return bool(row["present"])


def recalled(store: Any, contents: list[str]) -> int:
    """How many of these memories a search through the index (or the exact scan without it) finds first."""
    found = 0
    for content in contents:
        with store.tx() as tx:
            hits = tx.similar(vector_for(content), floor=0.99, limit=1)
        found += bool(hits) and hits[0].memory.content == content
    return found


@pytest.fixture
def searched(pg_url: str) -> Iterator[PostgresStore]:
    """Searches always go through the index when there is one (no exact bound)."""
    opened = PostgresStore.open(pg_url, dim=DIM, exact_search_rows=0)
    yield cast(PostgresStore, AsSystem(opened))
    opened.close()


def insert(store: PostgresStore, tag: str, count: int) -> list[str]:
    contents = [f"{tag} {n}" for n in range(count)]
    with store.tx(write=True) as tx:
        for n, content in enumerate(contents):
            put(tx, memory(content, minutes=n), vector_for(content))
    return contents


def test_a_load_larger_than_the_store_runs_without_the_index_and_builds_it_after(
    searched: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("zero_memory.store.postgres.adapter.BULK_MIN_ROWS", 50)
    with searched.tx(write=True) as tx:
        add_users(tx, "alice")
    before = insert(searched, "before", 20)
    with searched.bulk_load(200):
        assert not has_index(searched)
        loaded = [c for n in range(4) for c in insert(searched, f"load{n}", 50)]
        assert recalled(searched, before + loaded[::10]) == len(before) + len(loaded[::10])  # exact meanwhile
    assert has_index(searched)
    assert recalled(searched, before + loaded) == len(before) + len(loaded)


def test_a_small_load_or_one_smaller_than_the_store_keeps_the_index(
    searched: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("zero_memory.store.postgres.adapter.BULK_MIN_ROWS", 50)
    with searched.tx(write=True) as tx:
        add_users(tx, "alice")
    insert(searched, "before", 100)
    for rows in (40, 60):
        with searched.bulk_load(rows):
            assert has_index(searched)


def test_a_process_killed_mid_load_leaves_a_store_that_recalls_and_the_next_start_builds_the_index(
    pg_url: str,
) -> None:
    store = cast(PostgresStore, AsSystem(PostgresStore.open(pg_url, dim=DIM, exact_search_rows=0)))
    try:
        with store.tx(write=True) as tx:
            add_users(tx, "alice")
        before = insert(store, "before", 30)
    finally:
        store.close()
    proc = writer("bulk-load", pg_url, "loaded", "40", stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "loading"
    finally:
        kill(proc, timeout=30)
    loaded = [f"loaded {n}" for n in range(40)]
    # A process already running (no restart): the index is gone, every search is exact and finds everything.
    running = cast(PostgresStore, AsSystem(PostgresStore(pg_url, dim=DIM, exact_search_rows=0)))
    running._pool.open(wait=True, timeout=30)
    try:
        assert not has_index(running)
        assert recalled(running, before + loaded) == 70
    finally:
        running.close()
    restarted = cast(PostgresStore, AsSystem(PostgresStore.open(pg_url, dim=DIM, exact_search_rows=0)))
    try:
        assert has_index(restarted)
        assert recalled(restarted, before + loaded) == 70
    finally:
        restarted.close()


def test_an_import_of_many_memories_into_postgres_builds_the_index_after_loading(
    make_app: Callable[..., App], alice: Caller, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("zero_memory.store.postgres.adapter.BULK_MIN_ROWS", 50)
    drops: list[bool] = []
    original = PostgresStore._drop_vector_index

    def drop(self: PostgresStore, rows: int) -> bool:
        drops.append(original(self, rows))
        return drops[-1]

    monkeypatch.setattr(PostgresStore, "_drop_vector_index", drop)
    app = make_app(backend="postgres")
    records = tmp_path / "notes.jsonl"
    records.write_text("".join(json.dumps({"content": f"imported note number {n}"}) + "\n\n" for n in range(80)))
    assert count_records(records) == 80
    report = import_path(app, alice, records, scope="personal")
    assert report.imported == 80
    assert drops == [True]
    store = cast(PostgresStore, app.store)
    assert has_index(store)
    assert import_path(app, alice, records, scope="personal").skipped == 80  # smaller than the store: kept
    assert drops == [True, False]


def test_count_records_counts_markdown_files_and_jsonl_lines(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("one")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.md").write_text("two")
    (tmp_path / "sub" / "c.jsonl").write_text('{"content": "x"}\n\n{"content": "y"}\n')
    assert count_records(tmp_path) == 4
    assert count_records(tmp_path / "a.md") == 1
    assert count_records(tmp_path / "sub" / "c.jsonl") == 2


def test_zm_db_copy_into_postgres_builds_the_index_after_the_rows(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("zero_memory.store.postgres.adapter.BULK_MIN_ROWS", 50)
    source = open_store(sqlite_url(tmp_path), dim=DIM)
    contents = [f"copied {n}" for n in range(120)]
    with system_tx(source, "test", write=True) as tx:
        add_users(tx, "alice")
        for n, content in enumerate(contents):
            put(tx, memory(content, minutes=n), vector_for(content))
    destination = PostgresStore.open(pg_url, dim=DIM, exact_search_rows=0)
    drops: list[bool] = []
    original = destination._drop_vector_index
    monkeypatch.setattr(destination, "_drop_vector_index", lambda rows: drops.append(original(rows)) or drops[-1])
    try:
        report = copy_store(source, destination)
        assert report.ok
        assert drops == [True]
        assert has_index(destination)
        assert recalled(AsSystem(destination), contents) == len(contents)
    finally:
        destination.close()
        source.close()
