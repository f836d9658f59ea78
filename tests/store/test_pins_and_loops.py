"""Pins, loop listings and scope-limited listings, on both stores."""

from __future__ import annotations

import pytest

from tests.store.factories import add_users, at, memory, put
from zero_memory.domain.memory import InvalidationReason, Kind, Status
from zero_memory.store import Store


@pytest.fixture
def users(store: Store) -> Store:
    with store.tx(write=True) as tx:
        add_users(tx, "alice", "bob")
    return store


def test_a_pin_is_added_once_and_removed_once(users: Store) -> None:
    rule = memory("Tabs in Makefiles", kind=Kind.CONVENTION)
    with users.tx(write=True) as tx:
        put(tx, rule)
        assert tx.add_pin(rule.id, "alice", at(1))
        assert not tx.add_pin(rule.id, "alice", at(2))
    with users.tx() as tx:
        assert tx.pinned([rule.id, "mem_other"]) == {rule.id}
        assert [m.id for m in tx.pinned_in(["proj.alice.api"])] == [rule.id]
        assert tx.pinned_in(["user.alice"]) == [] and tx.pinned_in([]) == []
    with users.tx(write=True) as tx:
        assert tx.remove_pin(rule.id)
        assert not tx.remove_pin(rule.id)
    with users.tx() as tx:
        assert tx.pinned([rule.id]) == set()


def test_pinned_in_leaves_out_retired_memories_and_keeps_pin_order(users: Store) -> None:
    first = memory("First rule", kind=Kind.CONVENTION, minutes=5)
    second = memory("Second rule", kind=Kind.PREFERENCE, minutes=1)
    gone = memory("Gone rule", status=Status.INVALIDATED, reason=InvalidationReason.FORGOTTEN)
    with users.tx(write=True) as tx:
        for m in (first, second, gone):
            put(tx, m)
        tx.add_pin(first.id, "alice", at(1))
        tx.add_pin(second.id, "alice", at(2))
        tx.add_pin(gone.id, "alice", at(3))
    with users.tx() as tx:
        assert [m.id for m in tx.pinned_in(["proj.alice.api"])] == [first.id, second.id]


def test_live_memories_by_scope_and_closed_loops(users: Store) -> None:
    task = memory("Open task", kind=Kind.TASK, minutes=1)
    question = memory("Open question", kind=Kind.OPEN_QUESTION, scope="user.alice", minutes=2)
    elsewhere = memory("Task elsewhere", kind=Kind.TASK, scope="proj.bob.web", owner="bob", minutes=3)
    closed = memory("Done task", kind=Kind.TASK, status=Status.INVALIDATED, reason=InvalidationReason.CLOSED)
    forgotten = memory("Forgotten task", kind=Kind.TASK, status=Status.INVALIDATED, reason=InvalidationReason.FORGOTTEN)
    with users.tx(write=True) as tx:
        for m in (task, question, elsewhere, closed, forgotten):
            put(tx, m)
    with users.tx() as tx:
        kinds = ["task", "open-question"]
        mine = tx.live_memories(scopes=["proj.alice.api", "user.alice"], kinds=kinds)
        assert [m.id for m in mine] == [task.id, question.id]
        assert tx.live_memories(scopes=[], kinds=kinds) == []
        assert [m.id for m in tx.closed_loops(["proj.alice.api"], limit=10)] == [closed.id]
        assert tx.closed_loops(["proj.bob.web"], limit=10) == []
