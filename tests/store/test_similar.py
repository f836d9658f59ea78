"""Vector search: floor, limit, filters, liveness, order."""

from __future__ import annotations

from typing import Any

import pytest

from tests.store.factories import add_users, at, axis, memory, put, random_unit, toward
from zero_memory.domain.memory import InvalidationReason, Memory, Status
from zero_memory.store import Store


@pytest.fixture
def users(store: Store) -> Store:
    with store.tx(write=True) as tx:
        add_users(tx, "alice", "bob")
    return store


def found(store: Store, **kwargs: Any) -> list[tuple[str, float]]:
    kwargs.setdefault("floor", 0.0)
    kwargs.setdefault("limit", 10)
    with store.tx() as tx:
        return [(n.memory.content, round(n.similarity, 4)) for n in tx.similar(axis(0), **kwargs)]


@pytest.fixture
def graded(users: Store) -> dict[str, Memory]:
    """Alice's memories at known similarities to axis(0)."""
    rows = {
        "s95": (memory("s95"), toward(0.95)),
        "s80": (memory("s80", scope="user.alice"), toward(0.80, other=2)),
        "s60": (memory("s60"), toward(0.60, other=3)),
        "s30": (memory("s30", owner="bob", scope="proj.alice.api"), toward(0.30, other=4)),
        "s10": (memory("s10"), toward(0.10, other=5)),
    }
    with users.tx(write=True) as tx:
        for m, v in rows.values():
            put(tx, m, v)
    return {name: m for name, (m, _) in rows.items()}


def test_neighbours_come_most_similar_first_with_their_similarity(users: Store, graded: dict[str, Memory]) -> None:
    assert found(users) == [("s95", 0.95), ("s80", 0.8), ("s60", 0.6), ("s30", 0.3), ("s10", 0.1)]


def test_the_floor_and_the_limit_cut_the_list(users: Store, graded: dict[str, Memory]) -> None:
    assert found(users, floor=0.6) == [("s95", 0.95), ("s80", 0.8), ("s60", 0.6)]
    assert found(users, floor=0.99) == []
    assert found(users, limit=2) == [("s95", 0.95), ("s80", 0.8)]
    assert found(users, limit=0) == []


def test_scopes_owner_and_exclude_filter(users: Store, graded: dict[str, Memory]) -> None:
    assert [c for c, _ in found(users, scopes=["proj.alice.api"])] == ["s95", "s60", "s30", "s10"]
    assert [c for c, _ in found(users, scopes=["user.alice", "proj.nobody.x"])] == ["s80"]
    assert found(users, scopes=[]) == []
    assert [c for c, _ in found(users, owner="bob")] == ["s30"]
    assert found(users, owner="carol") == []
    assert [c for c, _ in found(users, exclude=[graded["s95"].id, graded["s60"].id])] == ["s80", "s30", "s10"]
    assert [c for c, _ in found(users, owner="alice", scopes=["proj.alice.api"], exclude=[graded["s95"].id])] == [
        "s60",
        "s10",
    ]


def test_invalidated_memories_are_never_neighbours(users: Store) -> None:
    with users.tx(write=True) as tx:
        put(tx, memory("gone", status=Status.INVALIDATED, reason=InvalidationReason.FORGOTTEN), axis(0))
        put(tx, memory("here"), toward(0.5))
    assert found(users) == [("here", 0.5)]


def test_a_status_change_or_a_move_is_followed(users: Store, graded: dict[str, Memory]) -> None:
    s95 = graded["s95"]
    with users.tx(write=True) as tx:
        tx.set_status(s95.id, Status.INVALIDATED, InvalidationReason.FORGOTTEN, None, at(1))
    assert found(users, limit=1) == [("s80", 0.8)]
    with users.tx(write=True) as tx:
        tx.set_status(s95.id, Status.LIVE, None, None, at(2))
    assert found(users, limit=1) == [("s95", 0.95)]
    with users.tx(write=True) as tx:
        tx.set_scope(s95.id, "user.alice.core", "proj.alice.api", at(3))
    assert [c for c, _ in found(users, scopes=["proj.alice.api"], limit=1)] == ["s60"]
    assert [c for c, _ in found(users, scopes=["user.alice.core"])] == ["s95"]


def test_a_new_embedding_is_followed(users: Store, graded: dict[str, Memory]) -> None:
    with users.tx(write=True) as tx:
        tx.update_embedding(graded["s10"].id, axis(0), "test-model")
    assert found(users, limit=1) == [("s10", 1.0)]


def test_memories_embedded_in_another_dimension_are_skipped(users: Store, graded: dict[str, Memory]) -> None:
    with users.tx(write=True) as tx:
        tx.update_embedding(graded["s95"].id, random_unit(1, dim=24), "bigger-model")
    assert [c for c, _ in found(users, limit=1)] == ["s80"]


def test_ties_are_ordered_by_id(users: Store) -> None:
    twins = [memory(f"twin {n}", id=f"mem_{name}") for n, name in enumerate(["c", "a", "b"])]
    with users.tx(write=True) as tx:
        for m in twins:
            put(tx, m, toward(0.7))
    with users.tx() as tx:
        assert [n.memory.id for n in tx.similar(axis(0), floor=0.0, limit=10)] == ["mem_a", "mem_b", "mem_c"]


def test_a_write_is_a_neighbour_within_its_own_transaction(users: Store) -> None:
    with users.tx(write=True) as tx:
        put(tx, memory("fresh"), axis(0))
        assert [n.memory.content for n in tx.similar(axis(0), floor=0.9, limit=5)] == ["fresh"]


def test_many_rows_filtered_to_a_small_scope_still_fill_the_limit(users: Store) -> None:
    """A scope with few rows among many closer ones elsewhere still yields all of its rows."""
    with users.tx(write=True) as tx:
        for n in range(300):
            put(tx, memory(f"crowd {n}", scope="proj.alice.crowd"), toward(0.9 + (n % 10) / 100, other=1 + n % 8))
        for n in range(5):
            put(tx, memory(f"few {n}", scope="proj.alice.few"), toward(0.2 + n / 10, other=9))
    with users.tx() as tx:
        hits = tx.similar(axis(0), floor=0.0, limit=10, scopes=["proj.alice.few"])
    assert [n.memory.content for n in hits] == ["few 4", "few 3", "few 2", "few 1", "few 0"]
