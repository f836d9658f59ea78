"""The SQLite store skips recall's dispute and reinforcement reads when their table holds nothing to find
(store/sqlite/empty_reads.py): the first dispute, the first surfacing within the window, are seen at once,
in the transaction that wrote them and in the next one of another process."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from tests.store.conftest import sqlite_url
from tests.store.factories import DIM, add_users, at, memory, put
from tests.store.test_anchors import anchor
from tests.store.test_disputes import dispute
from zero_memory.domain.records import Channel, DisputeStatus
from zero_memory.store.sqlite.adapter import SQLiteStore


def open_sqlite(folder: Path) -> SQLiteStore:
    return SQLiteStore.open(sqlite_url(folder), dim=DIM)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    opened = open_sqlite(tmp_path)
    with opened.tx(write=True) as tx:
        add_users(tx, "alice")
        for name in ("mem_a", "mem_b"):
            put(tx, memory(name, id=name))
    yield opened
    opened.close()


def test_the_first_dispute_is_seen_by_the_next_read(store: SQLiteStore, tmp_path: Path) -> None:
    with store.tx() as tx:
        assert tx.open_disputes_for(["mem_a", "mem_b"]) == []
    with store.tx(write=True) as tx:
        tx.add_dispute(dispute("dsp_1", "mem_a", "mem_b"))
        assert [d.id for d in tx.open_disputes_for(["mem_b"])] == ["dsp_1"]  # its own write
    with store.tx() as tx:
        assert [d.id for d in tx.open_disputes_for(["mem_a"])] == ["dsp_1"]
    with closing(open_sqlite(tmp_path)) as other, other.tx() as tx:
        assert [d.id for d in tx.open_disputes_for(["mem_a"])] == ["dsp_1"]


def test_a_settled_dispute_alone_is_read_and_found_closed(store: SQLiteStore) -> None:
    with store.tx(write=True) as tx:
        tx.add_dispute(dispute("dsp_1", "mem_a", "mem_b", status=DisputeStatus.DISMISSED))
    with store.tx() as tx:
        assert tx.open_disputes_for(["mem_a"]) == []


def test_the_first_surfacing_within_the_window_is_counted(store: SQLiteStore, tmp_path: Path) -> None:
    with store.tx() as tx:
        assert tx.sessions_served(["mem_a"], since=at(0), channel=Channel.RECALL) == {}
    with store.tx(write=True) as tx:
        tx.add_surfacings("alice", ["mem_a"], at(5), session_id="s1", channel=Channel.RECALL)
        assert tx.sessions_served(["mem_a"], since=at(0), channel=Channel.RECALL) == {"mem_a": 1}
    with closing(open_sqlite(tmp_path)) as other, other.tx() as tx:
        assert tx.sessions_served(["mem_a", "mem_b"], since=at(5), channel=Channel.RECALL) == {"mem_a": 1}
        assert tx.sessions_served(["mem_a"], since=at(6), channel=Channel.RECALL) == {}  # before the window


def test_the_first_anchor_is_seen_by_the_next_read(store: SQLiteStore, tmp_path: Path) -> None:
    with store.tx() as tx:
        assert tx.anchors_of(["mem_a"]) == {}
    first = anchor("mem_a", "net/client.py", "retry")
    with store.tx(write=True) as tx:
        tx.set_anchors("mem_a", [first], at(1))
        assert tx.anchors_of(["mem_a"]) == {"mem_a": [first]}
    with closing(open_sqlite(tmp_path)) as other, other.tx() as tx:
        assert tx.anchors_of(["mem_a", "mem_b"]) == {"mem_a": [first]}
