"""Transactions, named locks and migrations: the same guarantees on both stores."""

from __future__ import annotations

import threading

import pytest

from tests.store.factories import DIM, AsSystem, add_users, axis, memory, put, toward
from zero_memory.domain.records import Link
from zero_memory.store import Store, open_store


class Boom(Exception):
    pass


def committed_count(store: Store) -> int:
    """Memories as another thread sees them: committed rows only."""
    seen: list[int] = []

    def read() -> None:
        with store.tx() as tx:
            seen.append(tx.count_memories())

    reader = threading.Thread(target=read)
    reader.start()
    reader.join()
    return seen[0]


def test_a_nested_transaction_joins_the_outer_one(store: Store) -> None:
    with store.tx(write=True) as outer:
        add_users(outer, "alice")
        with store.tx(write=True) as inner:
            put(inner, memory("inner"))
        assert outer.count_memories() == 1
        assert committed_count(store) == 0  # leaving the inner block committed nothing
    assert committed_count(store) == 1


def test_an_exception_in_a_nested_transaction_rolls_back_the_outer_one(store: Store) -> None:
    with pytest.raises(Boom), store.tx(write=True) as outer:
        add_users(outer, "alice")
        with store.tx() as inner:
            put(inner, memory("inner"))
            raise Boom
    with store.tx() as tx:
        assert tx.get_user("alice") is None
        assert tx.count_memories() == 0


def test_a_rolled_back_transaction_leaves_nothing_behind(store: Store) -> None:
    m = memory("doomed")
    with pytest.raises(Boom), store.tx(write=True) as tx:
        add_users(tx, "alice")
        put(tx, m, axis(0))
        tx.add_link(Link("lnk_1", m.id, "mem_other", "relates_to", m.created_at, "alice"))
        tx.add_audit(
            actor="alice", action="remember", owner="alice", memory_ids=[m.id], payload={}, run_id=None, at=m.created_at
        )
        tx.attach_session("alice", "s1", "proj.alice.api", m.created_at)
        raise Boom
    with store.tx() as tx:
        assert tx.list_users() == []
        assert tx.count_memories() == 0
        assert tx.links_of(m.id) == []
        assert tx.audit_for_memory(m.id) == []
        assert tx.get_session("alice", "s1") is None
        assert tx.similar(axis(0), floor=0.0, limit=5) == []


def test_search_forgets_a_rolled_back_write(store: Store) -> None:
    """A row searched, then rolled back, is gone; the next write is found in its place."""
    with store.tx(write=True) as tx:
        add_users(tx, "alice")
    with pytest.raises(Boom), store.tx(write=True) as tx:
        put(tx, memory("rolled back"), axis(0))
        assert [n.memory.content for n in tx.similar(axis(0), floor=0.5, limit=5)] == ["rolled back"]
        raise Boom
    with store.tx(write=True) as tx:
        put(tx, memory("kept"), toward(0.9))
    with store.tx() as tx:
        assert [n.memory.content for n in tx.similar(axis(0), floor=0.5, limit=5)] == ["kept"]


def test_serialize_is_accepted_in_a_write_transaction(store: Store) -> None:
    with store.tx(write=True) as tx:
        tx.serialize("remember:alice:proj.alice.api")
        tx.serialize("remember:alice:proj.alice.api")
        add_users(tx, "alice")
    with store.tx() as tx:
        assert tx.get_user("alice") is not None


def test_a_named_lock_is_held_once(store: Store, store_url: str) -> None:
    other = open_store(store_url, dim=DIM)  # as another process would
    try:
        with store.advisory_lock("hygiene.cycle") as taken:
            assert taken
            with store.advisory_lock("hygiene.cycle") as again:
                assert not again
            with other.advisory_lock("hygiene.cycle") as elsewhere:
                assert not elsewhere
            with other.advisory_lock("hygiene.retro") as different:
                assert different
        with other.advisory_lock("hygiene.cycle") as after:
            assert after
    finally:
        other.close()


def test_a_named_lock_is_released_when_its_block_raises(store: Store) -> None:
    with pytest.raises(Boom), store.advisory_lock("hygiene.cycle") as taken:
        assert taken
        raise Boom
    with store.advisory_lock("hygiene.cycle") as again:
        assert again


def test_migrating_again_changes_nothing(store: Store, store_url: str) -> None:
    with store.tx(write=True) as tx:
        add_users(tx, "alice")
        put(tx, memory())
    assert store.migrate() == []
    reopened = AsSystem(open_store(store_url, dim=DIM))
    try:
        assert reopened.migrate() == []
        with reopened.tx() as tx:
            assert tx.count_memories() == 1
    finally:
        reopened.close()


def test_a_read_transaction_sees_one_snapshot(store: Store) -> None:
    with store.tx(write=True) as tx:
        add_users(tx, "alice")

    def write_elsewhere() -> None:
        with store.tx(write=True) as tx:
            put(tx, memory("meanwhile"))

    with store.tx() as tx:
        assert tx.count_memories() == 0
        writer = threading.Thread(target=write_elsewhere)
        writer.start()
        writer.join()
        assert tx.count_memories() == 0
        assert tx.similar(axis(0), floor=0.5, limit=5) == []
    with store.tx() as tx:
        assert tx.count_memories() == 1
