"""The SQLite store keeps a query's word counts and postings while the memories do not change, carries them
forward while memories only arrive, and reads them again after any other change."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.store.conftest import sqlite_url
from tests.store.factories import DIM, add_users, memory, put
from zero_memory.store.fulltext import TextPlan
from zero_memory.store.sqlite.adapter import SQLiteStore

QUERY = "zebra service crossing"


def open_sqlite(folder: Path) -> SQLiteStore:
    return SQLiteStore.open(sqlite_url(folder), dim=DIM)


def plan_of(store: SQLiteStore, query: str = QUERY) -> TextPlan:
    with store.tx() as tx:
        return tx.text_plan(query)


def fresh_plan(folder: Path, query: str = QUERY) -> TextPlan:
    """The plan as a process that never counted before reads it."""
    with closing(open_sqlite(folder)) as other:
        return plan_of(other, query)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    opened = open_sqlite(tmp_path)
    with opened.tx(write=True) as tx:
        add_users(tx, "alice")
        for n in range(6):
            put(tx, memory(f"The service number {n} restarts nightly", minutes=n))
        put(tx, memory("A zebra crossing outside the office", minutes=7))
    yield opened
    opened.close()


def test_counts_read_again_after_another_process_adds_forgets_or_rewrites_memories(
    store: SQLiteStore, tmp_path: Path
) -> None:
    before = plan_of(store)
    assert before == fresh_plan(tmp_path)
    with closing(open_sqlite(tmp_path)) as other, other.tx(write=True) as tx:
        put(tx, memory("Another zebra near the service entrance", minutes=8))
        put(tx, memory("Zebra stripes on the service dashboard", minutes=9))
    after_adding = plan_of(store)
    assert after_adding == fresh_plan(tmp_path)
    assert after_adding != before
    with closing(open_sqlite(tmp_path)) as other, other.tx(write=True) as tx:
        tx.conn.execute("UPDATE memories SET content = 'no stripes here' WHERE content LIKE 'Another zebra%'")
    assert plan_of(store) == fresh_plan(tmp_path) != after_adding


def test_a_transaction_counts_its_own_writes_and_a_rollback_leaves_no_trace_of_them(
    store: SQLiteStore, tmp_path: Path
) -> None:
    committed = plan_of(store)
    with pytest.raises(RuntimeError), store.tx(write=True) as tx:
        put(tx, memory("A zebra in the service yard", minutes=10))
        assert tx.text_plan(QUERY) != committed
        raise RuntimeError("roll back")
    # The next commit takes the change counter's value the rolled-back write had, with other rows.
    with store.tx(write=True) as tx:
        put(tx, memory("The service number 7 restarts hourly", minutes=11))
    assert plan_of(store) == fresh_plan(tmp_path)


def candidates_of(store: SQLiteStore, query: str = QUERY) -> list[str]:
    with store.tx() as tx:
        return tx.text_candidates(tx.text_plan(query), scopes={"proj.alice.api"}, limit=20)


def fresh_candidates(folder: Path, query: str = QUERY) -> list[str]:
    with closing(open_sqlite(folder)) as other:
        return candidates_of(other, query)


def test_postings_kept_are_read_again_after_another_process_adds_removes_or_rewrites_memories(
    store: SQLiteStore, tmp_path: Path
) -> None:
    before = candidates_of(store)
    assert before == fresh_candidates(tmp_path)
    kept = store.postings.kept(_rev(store), "zebra")  # kept by the search above
    assert kept is not None and len(kept) == 1
    with closing(open_sqlite(tmp_path)) as other, other.tx(write=True) as tx:
        put(tx, memory("Another zebra near the service entrance", minutes=8))
    after_adding = candidates_of(store)
    assert after_adding == fresh_candidates(tmp_path) != before
    with closing(open_sqlite(tmp_path)) as other, other.tx(write=True) as tx:
        tx.conn.execute("UPDATE memories SET content = 'no stripes here' WHERE content LIKE 'Another zebra%'")
    assert candidates_of(store) == fresh_candidates(tmp_path) == before
    with closing(open_sqlite(tmp_path)) as other, other.tx(write=True) as tx:
        tx.conn.execute("DELETE FROM memories WHERE content LIKE 'A zebra crossing%'")
    assert candidates_of(store) == fresh_candidates(tmp_path) != before


def _rev(store: SQLiteStore) -> int:
    with store.tx() as tx:
        return tx.committed_rev()


def test_words_kept_are_carried_forward_while_memories_only_arrive(store: SQLiteStore, tmp_path: Path) -> None:
    before = candidates_of(store)
    rev = _rev(store)
    kept = store.postings.kept(rev, "zebra")
    assert kept is not None
    with closing(open_sqlite(tmp_path)) as other, other.tx(write=True) as tx:
        put(tx, memory("Another zebra near the service entrance", minutes=8))
    after = candidates_of(store)
    assert after == fresh_candidates(tmp_path) != before
    grown = store.postings.kept(_rev(store), "zebra")
    assert grown is not None and len(grown) == 2
    assert list(grown[:1]) == list(kept)  # what was kept, and the new row's number after it
    assert not kept.flags.writeable and not grown.flags.writeable  # shared by every query asking the word
    assert plan_of(store) == fresh_plan(tmp_path)


WORDS = ["zebra", "service", "crossing", "nightly", "office", "stripes"]
texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join)
# What another process does to the memories between two of this store's recalls.
changes = st.one_of(
    st.tuples(st.just("add"), texts),
    st.tuples(st.just("add"), texts),
    st.tuples(st.just("rewrite"), texts),
    st.tuples(st.just("invalidate"), st.just("")),
    st.tuples(st.just("remove"), st.just("")),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.lists(changes, min_size=1, max_size=3), min_size=1, max_size=5), pick=st.randoms())
def test_what_is_kept_always_answers_as_a_fresh_read(
    store: SQLiteStore, tmp_path: Path, steps: list[list[tuple[str, str]]], pick: object
) -> None:
    """Whatever arrives, changes or goes between recalls, the plan and the candidates of a store that kept its
    words are those of a process that never read them."""
    import random

    assert isinstance(pick, random.Random)
    for query in ("zebra service crossing", "nightly stripes office"):
        candidates_of(store, query)
    for batch in steps:
        with closing(open_sqlite(tmp_path)) as other, other.tx(write=True) as tx:
            for change, text in batch:
                seqs = [row[0] for row in tx.conn.execute("SELECT seq FROM memories").fetchall()]
                if change == "add" or not seqs:
                    put(tx, memory(f"The {text} note", minutes=pick.randint(0, 10_000)))
                elif change == "rewrite":
                    tx.conn.execute("UPDATE memories SET content = ? WHERE seq = ?", (text, pick.choice(seqs)))
                elif change == "invalidate":
                    tx.conn.execute("UPDATE memories SET status = 'invalidated' WHERE seq = ?", (pick.choice(seqs),))
                else:
                    tx.conn.execute("DELETE FROM memories WHERE seq = ?", (pick.choice(seqs),))
        for query in ("zebra service crossing", "nightly stripes office"):
            assert plan_of(store, query) == fresh_plan(tmp_path, query)
            assert candidates_of(store, query) == fresh_candidates(tmp_path, query)
