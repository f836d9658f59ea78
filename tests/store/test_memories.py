"""Memories: writes, visibility-filtered reads, lifecycle, embeddings and listings."""

from __future__ import annotations

import numpy as np
import pytest

from tests.store.factories import add_users, at, axis, brief_of, content_hash, memory, put, random_unit, visibility
from zero_memory.domain.memory import InvalidationReason, Kind, Status
from zero_memory.store import SYSTEM, Store


@pytest.fixture
def users(store: Store) -> Store:
    with store.tx(write=True) as tx:
        add_users(tx, "alice", "bob")
    return store


def test_a_memory_reads_back_with_every_field(users: Store) -> None:
    written = memory(
        "Deploys go through the staging cluster first — always.",
        kind=Kind.CONVENTION,
        source={"thread": "t-1", "client": "claude-code", "imported_from": "/src/api"},
    )
    with users.tx(write=True) as tx:
        put(tx, written)
    with users.tx() as tx:
        assert tx.get_memory(written.id, SYSTEM) == written
        assert tx.get_memory(written.id, visibility("alice", "proj.alice.api")) == written


def test_an_id_outside_the_readers_scopes_answers_as_a_missing_id(users: Store) -> None:
    secret = memory(scope="proj.alice.secret")
    with users.tx(write=True) as tx:
        put(tx, secret)
    bob = visibility("bob", "proj.bob.api", "proj.alice.api")
    with users.tx() as tx:
        assert tx.get_memory(secret.id, bob) is None
        assert tx.get_memory("mem_missing", bob) is None
        assert tx.get_memory(secret.id, visibility("bob")) is None
        assert tx.get_memories([secret.id, "mem_missing"], bob) == {}


def test_get_memories_returns_the_visible_ones_by_id(users: Store) -> None:
    seen = [memory(f"visible {n}", minutes=n) for n in range(3)]
    hidden = memory("hidden", scope="user.alice")
    with users.tx(write=True) as tx:
        for m in [*seen, hidden]:
            put(tx, m)
    reader = visibility("alice", "proj.alice.api")
    many = [seen[0].id, seen[0].id, hidden.id, seen[2].id] + [f"mem_nope{n}" for n in range(600)]
    with users.tx() as tx:
        assert tx.get_memories(many, reader) == {seen[0].id: seen[0], seen[2].id: seen[2]}
        assert set(tx.get_memories([m.id for m in [*seen, hidden]], SYSTEM)) == {m.id for m in [*seen, hidden]}
        assert tx.get_memories([], SYSTEM) == {}


def test_existing_ids_are_the_stored_ones_in_any_state_and_scope(users: Store) -> None:
    live = memory("live", minutes=1)
    elsewhere = memory("in another user's scope", scope="user.bob", owner="bob", minutes=2)
    retired = memory("retired", minutes=3)
    with users.tx(write=True) as tx:
        for m in (live, elsewhere, retired):
            put(tx, m)
        tx.set_status(retired.id, Status.INVALIDATED, InvalidationReason.FORGOTTEN, None, at(4))
    asked = [live.id, live.id, elsewhere.id, retired.id] + [f"mem_nope{n}" for n in range(600)]
    with users.tx() as tx:
        assert tx.existing_ids(asked) == {live.id, elsewhere.id, retired.id}
        assert tx.existing_ids(["mem_nope"]) == set()
        assert tx.existing_ids([]) == set()


def test_briefs_with_vectors_read_what_get_memories_and_memory_vectors_read(users: Store) -> None:
    seen = [memory(f"visible {n}", minutes=n, source={"thread": f"t-{n}"}) for n in range(3)]
    hidden = memory("hidden", scope="user.alice")
    with users.tx(write=True) as tx:
        for n, m in enumerate([*seen, hidden]):
            put(tx, m, random_unit(n))
    reader = visibility("alice", "proj.alice.api")
    many = [seen[0].id, seen[0].id, hidden.id, seen[2].id] + [f"mem_nope{n}" for n in range(600)]
    with users.tx() as tx:
        found = tx.briefs_with_vectors(many, reader)
        assert {i: b for i, (b, _) in found.items()} == {
            i: brief_of(m) for i, m in tx.get_memories(many, reader).items()
        }
        vectors = tx.memory_vectors([seen[0].id, seen[2].id])
        assert all(np.array_equal(v, vectors[i]) and v.dtype == np.float32 for i, (_, v) in found.items())
        assert set(tx.briefs_with_vectors([m.id for m in [*seen, hidden]], SYSTEM)) == {m.id for m in [*seen, hidden]}
        assert tx.briefs_with_vectors([], SYSTEM) == {}


def test_a_live_duplicate_is_found_by_hash_in_its_owner_and_scope_only(users: Store) -> None:
    old = memory("same words", minutes=0, status=Status.INVALIDATED, reason=InvalidationReason.FORGOTTEN)
    first = memory("same words", minutes=1)
    second = memory("same words", minutes=2)
    elsewhere = memory("same words", scope="user.alice", minutes=3)
    bobs = memory("same words", owner="bob", scope="proj.alice.api", minutes=4)
    with users.tx(write=True) as tx:
        for m in (second, old, first, elsewhere, bobs):
            put(tx, m)
    digest = content_hash("same words")
    with users.tx() as tx:
        assert tx.find_live_by_hash("alice", "proj.alice.api", digest) == first
        assert tx.find_live_by_hash("alice", "proj.alice.web", digest) is None
        assert tx.find_live_by_hash("alice", "proj.alice.api", content_hash("other")) is None
        assert tx.find_by_hash("alice", digest) == [old, first, second, elsewhere]
        assert tx.find_by_hash("bob", digest) == [bobs]


def test_set_status_invalidates_and_restores(users: Store) -> None:
    old, new = memory("old", minutes=0), memory("new", minutes=1)
    with users.tx(write=True) as tx:
        put(tx, old)
        put(tx, new)
        tx.set_status(old.id, Status.INVALIDATED, InvalidationReason.SUPERSEDED, new.id, at(10))
    with users.tx() as tx:
        got = tx.get_memory(old.id, SYSTEM)
        assert got is not None
        assert (got.status, got.invalidated_reason, got.superseded_by) == (
            Status.INVALIDATED,
            InvalidationReason.SUPERSEDED,
            new.id,
        )
        assert got.updated_at == at(10)
        assert got.created_at == at(0)
    with users.tx(write=True) as tx:
        tx.set_status(old.id, Status.LIVE, None, None, at(11))
    with users.tx() as tx:
        got = tx.get_memory(old.id, SYSTEM)
        assert got is not None
        assert (got.status, got.invalidated_reason, got.superseded_by) == (Status.LIVE, None, None)


def test_set_scope_moves_a_memory_and_visibility_follows(users: Store) -> None:
    m = memory(scope="proj.alice.api")
    with users.tx(write=True) as tx:
        put(tx, m)
        tx.set_scope(m.id, "user.alice.core", "proj.alice.api", at(5))
    with users.tx() as tx:
        assert tx.get_memory(m.id, visibility("alice", "proj.alice.api")) is None
        moved = tx.get_memory(m.id, visibility("alice", "user.alice.core"))
        assert moved is not None
        assert (moved.scope, moved.original_scope, moved.updated_at) == ("user.alice.core", "proj.alice.api", at(5))


def test_a_vector_reads_back_exactly(users: Store) -> None:
    m = memory()
    vector = random_unit(7)
    with users.tx(write=True) as tx:
        put(tx, m, vector)
    with users.tx() as tx:
        got = tx.memory_vector(m.id)
        assert got is not None
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, vector)
        assert tx.memory_vector("mem_missing") is None


def test_update_embedding_replaces_vector_and_model(users: Store) -> None:
    a, b = memory("a"), memory("b")
    with users.tx(write=True) as tx:
        put(tx, a, axis(0), "model-1")
        put(tx, b, axis(1), "model-1")
    with users.tx() as tx:
        assert tx.embedding_models() == {"model-1": 2}
    with users.tx(write=True) as tx:
        tx.update_embedding(a.id, axis(3), "model-2")
    with users.tx() as tx:
        np.testing.assert_array_equal(tx.memory_vector(a.id), axis(3))
        assert tx.embedding_models() == {"model-1": 1, "model-2": 1}


def test_a_vector_of_another_dimension_round_trips(users: Store) -> None:
    m = memory()
    with users.tx(write=True) as tx:
        put(tx, m)
        tx.update_embedding(m.id, random_unit(3, dim=24), "bigger-model")
    with users.tx() as tx:
        got = tx.memory_vector(m.id)
        assert got is not None
        assert got.shape == (24,)
        np.testing.assert_array_equal(got, random_unit(3, dim=24))


def test_counts_by_owner_and_status(users: Store) -> None:
    with users.tx(write=True) as tx:
        put(tx, memory("a1"))
        put(tx, memory("a2", status=Status.INVALIDATED, reason=InvalidationReason.FORGOTTEN))
        put(tx, memory("b1", owner="bob", scope="user.bob"))
    with users.tx() as tx:
        assert tx.count_memories() == 3
        assert tx.count_memories(owner="alice") == 2
        assert tx.count_memories(status=Status.LIVE) == 2
        assert tx.count_memories(owner="alice", status=Status.INVALIDATED) == 1
        assert tx.count_memories(owner="carol") == 0


class TestLiveMemories:
    @pytest.fixture
    def corpus(self, users: Store) -> dict[str, list[str]]:
        """Alice's live memories in two scopes and three kinds, two sharing a timestamp."""
        rows = [
            memory("m0", minutes=0, kind=Kind.FACT),
            memory("m1", minutes=1, kind=Kind.TASK, scope="proj.alice.web"),
            memory("m2a", minutes=2, kind=Kind.GOTCHA),
            memory("m2b", minutes=2, kind=Kind.GOTCHA),
            memory("m3", minutes=3, kind=Kind.FACT, scope="proj.alice.api-v2"),
            memory("gone", minutes=4, status=Status.INVALIDATED, reason=InvalidationReason.FORGOTTEN),
            memory("bob's", minutes=5, owner="bob", scope="user.bob"),
        ]
        with users.tx(write=True) as tx:
            for m in rows:
                put(tx, m)
        by_time = sorted(rows[:5], key=lambda m: (m.created_at, m.id))
        return {"alice": [m.id for m in by_time], "all": [m.id for m in by_time] + [rows[6].id]}

    def test_every_live_memory_oldest_first(self, users: Store, corpus: dict[str, list[str]]) -> None:
        with users.tx() as tx:
            assert [m.id for m in tx.live_memories()] == corpus["all"]
            assert [m.id for m in tx.live_memories(newest_first=True)] == corpus["all"][::-1]

    def test_filters_by_owner_kind_and_scope_prefix(self, users: Store, corpus: dict[str, list[str]]) -> None:
        with users.tx() as tx:
            assert [m.id for m in tx.live_memories(owner="alice")] == corpus["alice"]
            kinds = tx.live_memories(kinds=["gotcha", "task"])
            assert [m.id for m in kinds] == [i for i in corpus["alice"] if i in {m.id for m in kinds}]
            assert {m.content for m in kinds} == {"m1", "m2a", "m2b"}
            assert {m.content for m in tx.live_memories(scope_prefix="proj.alice.api")} == {"m0", "m2a", "m2b", "m3"}
            assert [m.content for m in tx.live_memories(scope_prefix="proj.alice.web")] == ["m1"]
            assert tx.live_memories(scope_prefix="team.") == []

    def test_since_takes_created_or_updated(self, users: Store, corpus: dict[str, list[str]]) -> None:
        with users.tx(write=True) as tx:
            tx.set_scope(corpus["alice"][0], "proj.alice.api", None, at(60))
        with users.tx() as tx:
            assert [m.id for m in tx.live_memories(owner="alice", since=at(3))] == [
                corpus["alice"][0],
                corpus["alice"][4],
            ]

    def test_the_cursor_pages_through_ties_without_loss(self, users: Store, corpus: dict[str, list[str]]) -> None:
        seen: list[str] = []
        after = None
        with users.tx() as tx:
            while page := tx.live_memories(owner="alice", after=after, limit=2):
                seen += [m.id for m in page]
                after = (page[-1].created_at, page[-1].id)
        assert seen == corpus["alice"]

    def test_limit(self, users: Store, corpus: dict[str, list[str]]) -> None:
        with users.tx() as tx:
            assert [m.id for m in tx.live_memories(limit=2)] == corpus["all"][:2]


def test_iter_memories_yields_every_row_in_id_order(users: Store) -> None:
    rows = [memory(f"m{n}", minutes=n) for n in range(7)]
    rows.append(memory("gone", status=Status.INVALIDATED, reason=InvalidationReason.MERGED))
    with users.tx(write=True) as tx:
        for m in rows:
            put(tx, m)
    with users.tx() as tx:
        assert [m.id for m in tx.iter_memories(batch=3)] == sorted(m.id for m in rows)
