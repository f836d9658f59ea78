"""The postings a PostgreSQL process keeps between recalls follow every write of every process.

Each check compares what a long-lived ``KeptPostings`` answers in a read transaction with what the table
holds in that same transaction (``POSTINGS``, the statement recall read before): every write below is made
through another store, as another server process would, and some commit in another order than they began.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any, cast

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.store.factories import AsSystem, add_users, at, memory, put
from zero_memory.store.ports.reader import SYSTEM
from zero_memory.store.postgres.adapter import PostgresStore
from zero_memory.store.postgres.postings import KEPT_SECONDS, KeptPostings, Postings, Snap
from zero_memory.store.postgres.tx import POSTINGS, seqs_of

from .conftest import DIM

API, WEB, ALICE = "proj.alice.api", "proj.alice.web", "user.alice"
SCOPES = (API, WEB, ALICE)
WORDS = ["zebra", "lion", "otter"]


@pytest.fixture
def stores(pg_url: str) -> Iterator[tuple[PostgresStore, PostgresStore]]:
    """The process that keeps postings, and another that writes."""
    keeper, writer = PostgresStore.open(pg_url, dim=DIM), PostgresStore.open(pg_url, dim=DIM)
    with AsSystem(writer).tx(write=True) as tx:
        add_users(tx, "alice")
    yield cast(PostgresStore, AsSystem(keeper)), cast(PostgresStore, AsSystem(writer))
    keeper.close()
    writer.close()


def compared(store: PostgresStore, scopes: list[str], words: list[str] = WORDS) -> tuple[list[Any], list[Any]]:
    """What ``store`` keeps of ``words`` in ``scopes``, and what the table holds, in one read transaction (in
    order of seq: the table's come in order scope by scope)."""
    with store.tx() as tx:
        conn = tx.conn
        kept = store.postings.read(conn, words, scopes)
        rows = conn.execute(POSTINGS, (scopes, words), binary=True).fetchall()
    held = {r["word"]: seqs_of(r["seqs"]) for r in rows}
    return [k.tolist() for k in kept], [sorted(held[w].tolist()) for w in words]


def assert_follows(store: PostgresStore) -> None:
    for scopes in ([API], [WEB, ALICE], list(SCOPES)):
        kept, held = compared(store, scopes)
        assert kept == held, scopes


def add(store: PostgresStore, text: str, scope: str = API) -> str:
    with store.tx(write=True) as tx:
        return put(tx, memory(text, scope=scope)).id


def test_memories_written_by_another_process_are_found_after_it_commits(
    stores: tuple[PostgresStore, PostgresStore],
) -> None:
    keeper, writer = stores
    add(writer, "a zebra and a lion")
    assert_follows(keeper)
    assert keeper.postings._words  # kept: what follows brings it forward rather than reading it again
    add(writer, "another zebra")
    add(writer, "an otter", scope=WEB)
    assert_follows(keeper)
    kept, _ = compared(keeper, [API, WEB])
    assert [len(k) for k in kept] == [2, 1, 1]


def test_a_write_that_began_first_and_committed_last_is_not_missed(
    stores: tuple[PostgresStore, PostgresStore],
) -> None:
    """Two users' writes do not wait for each other: the first seq taken may commit after a later one,
    and after a recall has seen the later one."""
    keeper, writer = stores
    add(writer, "a zebra")
    assert_follows(keeper)
    inserted, release, done = threading.Event(), threading.Event(), threading.Event()
    early: list[str] = []

    def slow_writer() -> None:
        with writer.tx(write=True) as tx:
            early.append(put(tx, memory("the early zebra", minutes=1)).id)
            inserted.set()
            release.wait(30)
        done.set()

    thread = threading.Thread(target=slow_writer)
    thread.start()
    try:
        assert inserted.wait(30)
        late = add(writer, "the late zebra")
        assert_follows(keeper)  # the late one is kept, the early one not yet committed
        with keeper.tx() as tx:
            assert set(tx.get_memories([late, early[0]], SYSTEM)) == {late}
    finally:
        release.set()
        thread.join(30)
    assert done.is_set()
    assert_follows(keeper)
    kept, _ = compared(keeper, [API], ["zebra"])
    assert len(kept[0]) == 3


@pytest.mark.parametrize("before_0029", [False, True], ids=["stamped", "written before 0029"])
def test_a_memory_moved_to_another_scope_is_found_there_only(
    stores: tuple[PostgresStore, PostgresStore], before_0029: bool
) -> None:
    """Migration 0029 leaves the memories there were without a transaction id (no table rewrite): a move
    stamps one."""
    keeper, writer = stores
    moved = add(writer, "a lion in the api")
    add(writer, "a lion on the web", scope=WEB)
    if before_0029:
        with writer.tx(write=True) as tx:
            tx._exec("UPDATE memories SET postings_xid = NULL")
    assert_follows(keeper)
    with writer.tx(write=True) as tx:
        tx.set_scope(moved, WEB, API, at(5))
    assert_follows(keeper)
    kept, _ = compared(keeper, [API, WEB], ["lion"])
    assert len(kept[0]) == 2
    assert compared(keeper, [API], ["lion"])[0] == [[]]


def test_a_removal_by_another_process_starts_what_is_kept_again(
    stores: tuple[PostgresStore, PostgresStore],
) -> None:
    """A removed memory's postings are not kept on (an account's erasure leaves nothing of its words)."""
    keeper, writer = stores
    gone = add(writer, "a zebra to remove")
    add(writer, "a zebra to keep")
    assert_follows(keeper)
    with writer.tx(write=True) as tx:
        tx._exec("DELETE FROM memories WHERE id = ?", (gone,))
    assert_follows(keeper)


def test_more_writes_than_a_catch_up_reads_start_it_again(pg_url: str, stores: tuple[Any, Any]) -> None:
    keeper, writer = stores
    keeper.postings = KeptPostings(catch_up_rows=2)
    add(writer, "one zebra")
    assert_follows(keeper)
    for n in range(3):
        add(writer, f"zebra number {n}")
    assert_follows(keeper)
    kept, _ = compared(keeper, [API], ["zebra"])
    assert len(kept[0]) == 4


def test_past_its_limit_it_starts_again_and_still_answers(stores: tuple[Any, Any]) -> None:
    keeper, writer = stores
    keeper.postings = KeptPostings(limit=2)
    for n in range(3):
        add(writer, f"zebra and lion {n}")
    assert_follows(keeper)
    assert keeper.postings._held <= 2


def test_what_is_kept_starts_again_every_ten_minutes_whatever_it_missed(stores: tuple[Any, Any]) -> None:
    """A snapshot of another server (a database restored elsewhere: transaction ids not this one's) would
    hide every later write from the catch-up; starting again bounds what that costs."""
    keeper, writer = stores
    now = [0.0]
    keeper.postings = KeptPostings(clock=lambda: now[0])
    add(writer, "a zebra")
    assert_follows(keeper)
    keeper.postings._at = Snap.parse("900000000:900000000:")
    add(writer, "a later zebra")
    kept, held = compared(keeper, [API], ["zebra"])
    assert len(kept[0]) == 1 and len(held[0]) == 2  # missed
    now[0] += KEPT_SECONDS
    assert_follows(keeper)


def test_transaction_ids_of_another_server_neither_hide_writes_nor_start_it_again(stores: tuple[Any, Any]) -> None:
    """A database restored from another server holds that server's transaction ids, which may run past this
    one's: its memories are not caught up at every recall, nor its last removal taken for a new one."""
    keeper, writer = stores
    restored = add(writer, "a restored zebra")
    with writer.tx(write=True) as tx:
        tx._exec("UPDATE memories SET postings_xid = '900000000' WHERE id = ?", (restored,))
        tx._exec("UPDATE postings_removed SET xid = '900000000'")
    keeper.postings.catch_up_rows = 1  # two memories caught up at once would start it again
    assert_follows(keeper)
    kept = keeper.postings._words["zebra"]
    add(writer, "an otter")  # a write moves the snapshot: the next recall catches up
    assert_follows(keeper)
    assert keeper.postings._words["zebra"] is kept  # neither read again nor started again
    add(writer, "a zebra written here")
    assert_follows(keeper)
    assert len(keeper.postings._words["zebra"].seqs) == len(kept.seqs) + 1


def test_a_write_transaction_reads_the_table_and_sees_its_own_writes(
    stores: tuple[PostgresStore, PostgresStore],
) -> None:
    keeper, writer = stores
    add(writer, "a zebra")
    assert_follows(keeper)
    with keeper.tx(write=True) as tx:
        mine = put(tx, memory("my own zebra", minutes=2)).id
        assert mine in tx.fulltext("zebra", scopes=[API], limit=10)
    assert_follows(keeper)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    steps=st.lists(
        st.one_of(
            st.tuples(st.just("add"), st.sampled_from(SCOPES), st.sets(st.sampled_from(WORDS), min_size=1)),
            st.tuples(st.just("move"), st.integers(0, 30), st.sampled_from(SCOPES)),
            st.tuples(st.just("remove"), st.integers(0, 30)),
            st.tuples(st.just("recall"), st.sets(st.sampled_from(WORDS), min_size=1), st.just(0)),
        ),
        max_size=12,
    )
)
def test_whatever_the_writes_what_is_kept_is_what_the_table_holds(
    stores: tuple[PostgresStore, PostgresStore], steps: list[tuple[Any, ...]]
) -> None:
    keeper, writer = stores
    ids: list[str] = []
    with writer.tx(write=True) as tx:
        tx._exec("DELETE FROM memories")  # each example starts empty
    for n, step in enumerate(steps):
        if step[0] == "add":
            ids.append(add(writer, f"note {n}: " + " ".join(sorted(step[2])), step[1]))
        elif step[0] == "move" and ids:
            with writer.tx(write=True) as tx:
                tx.set_scope(ids[step[1] % len(ids)], step[2], None, at(n))
        elif step[0] == "remove" and ids:
            with writer.tx(write=True) as tx:
                tx._exec("DELETE FROM memories WHERE id = ?", (ids.pop(step[1] % len(ids)),))
        elif step[0] == "recall":
            compared(keeper, [API], sorted(step[1]))  # keeps some words, not others
        assert_follows(keeper)


@given(
    kept=st.dictionaries(st.integers(0, 50), st.integers(0, 3), max_size=20),
    added=st.dictionaries(st.integers(0, 50), st.integers(0, 3), max_size=20),
)
def test_postings_joined_hold_each_seq_once_in_its_newest_scope(kept: dict[int, int], added: dict[int, int]) -> None:
    def postings(pairs: dict[int, int]) -> Postings:
        seqs = sorted(pairs)
        return Postings(np.array(seqs, np.int64), np.array([pairs[s] for s in seqs], np.int32))

    new = postings(added)
    joined = postings(kept).joined(new.seqs[::-1].copy(), new.scopes[::-1].copy())
    expected = kept | added
    assert joined.seqs.tolist() == sorted(expected)
    assert joined.scopes.tolist() == [expected[s] for s in sorted(expected)]
    assert joined.of([1]).tolist() == [s for s in sorted(expected) if expected[s] == 1]
