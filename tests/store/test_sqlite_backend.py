"""SQLite only: several processes on one file, and the in-process vector index following them."""

from __future__ import annotations

from pathlib import Path

from tests.store.conftest import sqlite_url
from tests.store.factories import DIM, add_users, axis, memory, put
from tests.store.processes import insert_concurrently
from tests.store.writer import vector_for
from zero_memory.domain.memory import InvalidationReason, Status
from zero_memory.store import Store, migrations
from zero_memory.store.sqlite.adapter import SQLiteStore


def test_a_new_file_applies_every_migration_once(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "zm.db", dim=DIM)
    try:
        assert store.migrate() == [name for _, name, _ in migrations.scripts("sqlite")]
        assert store.migrate() == []
    finally:
        store.close()


def test_two_processes_writing_one_file_lose_nothing(sqlite_store: Store, tmp_path: Path) -> None:
    with sqlite_store.tx(write=True) as tx:
        add_users(tx, "alice")
    insert_concurrently(sqlite_url(tmp_path), tmp_path, ["left", "right"], 200)
    with sqlite_store.tx() as tx:
        contents = {m.content for m in tx.live_memories(limit=1000)}
    assert contents == {f"{tag} {n}" for tag in ("left", "right") for n in range(200)}


def test_another_processs_writes_reach_this_processs_search(sqlite_store: Store, tmp_path: Path) -> None:
    with sqlite_store.tx(write=True) as tx:
        add_users(tx, "alice")
        put(tx, memory("mine"), axis(0))
    with sqlite_store.tx() as tx:
        assert [n.memory.content for n in tx.similar(axis(0), floor=0.5, limit=5)] == ["mine"]
    insert_concurrently(sqlite_url(tmp_path), tmp_path, ["theirs"], 3)
    with sqlite_store.tx() as tx:
        hits = tx.similar(vector_for("theirs 1"), floor=0.99, limit=5)
    assert [n.memory.content for n in hits] == ["theirs 1"]


def test_another_stores_status_change_reaches_this_stores_search(sqlite_store: Store, tmp_path: Path) -> None:
    """The index follows every change through the rev counter, whoever made it."""
    m = memory("watched")
    with sqlite_store.tx(write=True) as tx:
        add_users(tx, "alice")
        put(tx, m, axis(0))
    with sqlite_store.tx() as tx:
        assert len(tx.similar(axis(0), floor=0.5, limit=5)) == 1
    other = SQLiteStore.open(sqlite_url(tmp_path), dim=DIM)
    try:
        with other.tx(write=True) as tx:
            tx.set_status(m.id, Status.INVALIDATED, InvalidationReason.FORGOTTEN, None, m.created_at)
    finally:
        other.close()
    with sqlite_store.tx() as tx:
        assert tx.similar(axis(0), floor=0.5, limit=5) == []
