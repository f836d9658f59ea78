"""The SQLite store keeps recall's rows (briefs and vectors) while the memories do not change, and only then.

Another process is another ``SQLiteStore`` on the same file: its own connections, index and caches.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.store.conftest import sqlite_url
from tests.store.factories import DIM, add_users, memory, put, toward, visibility
from zero_memory.domain.memory import InvalidationReason, Status
from zero_memory.store.sqlite.adapter import SQLiteStore
from zero_memory.store.sqlite.row_cache import RowCache

SRC = Path(__file__).resolve().parents[2] / "src" / "zero_memory"
SCOPE = "proj.alice.api"
OTHER_SCOPE = "proj.alice.web"
QUERY = "zebra service crossing"
READER = visibility("alice", SCOPE, OTHER_SCOPE)


def open_sqlite(folder: Path) -> SQLiteStore:
    return SQLiteStore.open(sqlite_url(folder), dim=DIM)


def read(store: SQLiteStore, scopes: frozenset[str] = frozenset({SCOPE})) -> Any:
    """What recall reads: the vector side's briefs and similarities, and the full text's briefs and vectors."""
    with store.tx() as tx:
        search = tx.vector_search(floor=0.0, limit=20, scopes=scopes)
        plan = tx.text_plan(QUERY)
        neighbours, text = search.run(
            lambda: toward(0.9), lambda: tx.text_briefs(plan, scopes=scopes, limit=20, reader=READER)
        )
    return (
        [(n.brief, round(n.similarity, 6)) for n in neighbours],
        sorted(((brief, None if vector is None else vector.tolist()) for brief, vector in text.values()), key=repr),
    )


def fresh(folder: Path) -> Any:
    """What a process that never read before reads."""
    with closing(open_sqlite(folder)) as other:
        return read(other)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    opened = open_sqlite(tmp_path)
    with opened.tx(write=True) as tx:
        add_users(tx, "alice")
        for n in range(6):
            put(tx, memory(f"The zebra service number {n} restarts nightly", minutes=n), toward(0.5 + n / 20))
        put(tx, memory("A zebra crossing outside the office", minutes=7, id="mem_crossing"), toward(0.8))
    yield opened
    opened.close()


def other_writes(folder: Path, sql: str, params: tuple[Any, ...] = ()) -> None:
    with closing(open_sqlite(folder)) as other, other.tx(write=True) as tx:
        tx.conn.execute(sql, params)


def test_rows_are_served_from_the_cache_once_read(store: SQLiteStore) -> None:
    first = read(store)
    with store.tx() as tx:
        rev = tx.committed_rev()
    assert len(store.row_cache.get(rev, range(1, 8))) == 7
    assert read(store) == first


@pytest.mark.parametrize(
    ("change", "params"),
    [
        # Retired, moved out of the scopes read (visibility), rewritten, given another vector, removed.
        (
            "UPDATE memories SET status = 'invalidated', invalidated_reason = ? WHERE id = 'mem_crossing'",
            (InvalidationReason.SUPERSEDED.value,),
        ),
        ("UPDATE memories SET scope = ? WHERE id = 'mem_crossing'", (OTHER_SCOPE,)),
        ("UPDATE memories SET content = 'no stripes here' WHERE id = 'mem_crossing'", ()),
        (
            "UPDATE memories SET embedding = ? WHERE id = 'mem_crossing'",
            (np.ascontiguousarray(toward(0.1), dtype=np.float32).tobytes(),),
        ),
        ("DELETE FROM memories WHERE id = 'mem_crossing'", ()),
    ],
    ids=["retired", "moved", "rewritten", "new-vector", "removed"],
)
def test_another_process_change_is_read_at_the_next_transaction(
    store: SQLiteStore, tmp_path: Path, change: str, params: tuple[Any, ...]
) -> None:
    before = read(store)
    other_writes(tmp_path, change, params)
    after = read(store)
    assert after == fresh(tmp_path)
    assert after != before


def test_another_process_insert_is_read_and_the_rows_held_stay(store: SQLiteStore, tmp_path: Path) -> None:
    read(store)
    with closing(open_sqlite(tmp_path)) as other, other.tx(write=True) as tx:
        put(tx, memory("Another zebra near the service entrance", minutes=8), toward(0.95))
    after = read(store)
    assert after == fresh(tmp_path)
    assert "Another zebra near the service entrance" in [brief.content for brief, _ in after[0]]
    with store.tx() as tx:
        rev = tx.committed_rev()
    assert len(store.row_cache.get(rev, range(1, 9))) == 8


def test_a_transaction_reads_its_own_writes_and_a_rollback_leaves_no_trace_of_them(
    store: SQLiteStore, tmp_path: Path
) -> None:
    committed = read(store)
    with pytest.raises(RuntimeError), store.tx(write=True) as tx:
        tx.set_status("mem_crossing", Status.INVALIDATED, InvalidationReason.SUPERSEDED, None, memory().created_at)
        neighbours, _ = tx.vector_search(floor=0.0, limit=20, scopes={SCOPE}).run(lambda: toward(0.9), lambda: None)
        assert "mem_crossing" not in [n.brief.id for n in neighbours]
        raise RuntimeError("roll back")
    assert read(store) == committed == fresh(tmp_path)


def test_a_transaction_begun_before_the_cache_moved_on_reads_its_own_snapshot(
    store: SQLiteStore, tmp_path: Path
) -> None:
    with closing(open_sqlite(tmp_path)) as older, older.tx() as tx:
        rev = tx.committed_rev()  # its snapshot starts here
        other_writes(tmp_path, "UPDATE memories SET status = 'invalidated' WHERE id = 'mem_crossing'")
        # Another thread of the process reads after the change: the cache moves past ``rev``.
        reader = threading.Thread(target=read, args=(older,))
        reader.start()
        reader.join()
        assert not older.row_cache.serves(rev, lambda after, limit: [])
        seen = tx.cached_rows(list(range(1, 8)))
        assert seen[7].brief.status == Status.LIVE  # as of its snapshot


def test_the_cache_holds_at_most_its_rows(store: SQLiteStore) -> None:
    store.row_cache.max_rows = 3
    first = read(store)
    with store.tx() as tx:
        rev = tx.committed_rev()
    assert len(store.row_cache.get(rev, range(1, 8))) == 3
    assert read(store) == first


def test_recalls_coming_round_to_a_few_more_rows_than_the_cache_holds_are_still_mostly_served(
    store: SQLiteStore,
) -> None:
    """Rows asked again in the same order, a tenth more of them than the cache holds: forgetting the oldest
    first forgot each just before it was asked (nothing served), forgetting at random keeps most."""
    with store.tx() as tx:
        rev = tx.committed_rev()
        row = tx.cached_rows([1])[1]
    cache = RowCache(max_rows=1_000)
    assert cache.serves(rev, lambda after, limit: [])
    asked = served = 0
    for lap in range(6):
        for start in range(0, 1_100, 100):
            seqs = range(start, start + 100)
            found = cache.get(rev, seqs)
            if lap >= 3:  # the laps after the cache filled
                asked, served = asked + len(seqs), served + len(found)
            cache.put(rev, {seq: row for seq in seqs if seq not in found})
            assert len(cache.get(rev, range(1_100))) <= 1_000
    assert served / asked > 0.6


def test_every_column_a_cached_row_holds_moves_the_change_counter_when_the_code_changes_it() -> None:
    """The rows are kept while the ``rev`` counter stays: a statement changing a column a brief or its
    vector holds that the counter's trigger (migration 0001) does not watch would leave them stale."""
    watched = {"status", "scope", "owner", "embedding", "content"}
    free = {
        "invalidated_reason",
        "superseded_by",
        "updated_at",
        "restored_at",
        "original_scope",
        "embedding_model",
        "embedding_dim",
        "session_key",
        "source",
        "rev",
    }  # not read by recall, or set with ``embedding``
    statements = [
        match
        for path in SRC.rglob("*.py")
        for match in re.findall(r"UPDATE memories SET (.+?) WHERE", path.read_text(), flags=re.S)
    ]
    assert statements
    for assignments in statements:
        columns = {part.split("=")[0].strip().strip('"') for part in assignments.replace('" "', "").split(",")}
        assert columns <= watched | free, assignments
