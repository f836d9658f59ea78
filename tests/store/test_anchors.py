"""Anchors on both stores: set with their memory, read by memory and by scope, updated by verification."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.store.factories import add_users, at, memory, put
from zero_memory.domain.anchors import AnchorRecord, AnchorState, Origin
from zero_memory.domain.memory import InvalidationReason, Status
from zero_memory.store import Store


def anchor(memory_id: str, path: str, symbol: str | None = None, **fields: object) -> AnchorRecord:
    base = AnchorRecord(
        memory_id=memory_id,
        path=path,
        symbol=symbol,
        origin=Origin.EXPLICIT,
        state=AnchorState.VERIFIED,
        repository="example.org/team/api",
        commit="c" * 40,
        content_hash="sha256:1",
        verified_at=at(1),
    )
    return replace(base, **fields)  # type: ignore[arg-type]


@pytest.fixture
def users(store: Store) -> Store:
    with store.tx(write=True) as tx:
        add_users(tx, "alice", "bob")
    return store


def test_anchors_round_trip_and_are_replaced_whole(users: Store) -> None:
    note = memory("retry() in net/client.py backs off")
    first = [anchor(note.id, "net/client.py", "retry"), anchor(note.id, "db/0042_billing.sql", origin=Origin.AUTOMATIC)]
    with users.tx(write=True) as tx:
        put(tx, note)
        tx.set_anchors(note.id, first, at(1))
    with users.tx() as tx:
        assert tx.anchors_of([note.id, "mem_none"]) == {note.id: sorted(first, key=lambda a: a.path)}
    with users.tx(write=True) as tx:
        tx.set_anchors(note.id, [anchor(note.id, "net/http.py", "retry")], at(2))
    with users.tx() as tx:
        assert [(a.path, a.symbol) for a in tx.anchors_of([note.id])[note.id]] == [("net/http.py", "retry")]


def test_anchors_in_scopes_cover_live_memories_only(users: Store) -> None:
    live = memory("flush() is never called in a transaction", minutes=1)
    gone = memory("retired", status=Status.INVALIDATED, reason=InvalidationReason.FORGOTTEN, minutes=2)
    other = memory("bob's", scope="proj.bob.web", owner="bob", minutes=3)
    with users.tx(write=True) as tx:
        for m in (live, gone, other):
            put(tx, m)
            tx.set_anchors(m.id, [anchor(m.id, "store.py", "flush")], at(1))
    with users.tx() as tx:
        assert [a.memory_id for a in tx.anchors_in(["proj.alice.api"])] == [live.id]
        assert tx.anchors_in([]) == []


def test_verification_updates_one_anchor_in_place(users: Store) -> None:
    note = memory("retry() backs off")
    old = anchor(note.id, "net/client.py", "retry")
    with users.tx(write=True) as tx:
        put(tx, note)
        tx.set_anchors(note.id, [old], at(1))
        moved = replace(old, path="net/backoff.py", commit="d" * 40, verified_at=at(5))
        assert tx.update_anchor(old, moved)
        assert not tx.update_anchor(old, moved)  # the old place is no longer there
        changed = replace(moved, state=AnchorState.CHANGED, drift=f"{'d' * 40}..{'e' * 40}")
        assert tx.update_anchor(moved, changed)
    with users.tx() as tx:
        assert tx.anchors_of([note.id])[note.id] == [changed]
