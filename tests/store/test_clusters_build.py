"""The clusters built on a thread of its own: searches answer exactly meanwhile, and nothing is lost or invented."""

from __future__ import annotations

import random
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest

from tests.store.conftest import sqlite_url
from tests.store.factories import DIM, AsSystem, at, random_unit
from tests.store.processes import kill, writer
from tests.store.test_vector_index import fill, live_contents, seqs_of, snapshot_keys
from tests.store.writer import BUILDING, found_by_index
from zero_memory.domain.memory import InvalidationReason, Kind, Status
from zero_memory.store import Store
from zero_memory.store.sqlite import clusters_build as clusters_build_module
from zero_memory.store.sqlite import vector_index as vector_index_module
from zero_memory.store.sqlite.adapter import SQLiteStore
from zero_memory.store.sqlite.index_files import IndexFiles

FILTERS: list[dict[str, Any]] = [
    {},
    {"owner": "bob"},
    {"scopes": ["proj.alice.api", "user.carol"]},
    {"owner": "alice", "kinds": [Kind.TASK]},
]


def open_building(folder: Path) -> SQLiteStore:
    return SQLiteStore.open(sqlite_url(folder), dim=DIM, **BUILDING)


class Gate:
    """Holds every background build: before it reads the database, and after, before the index may take it."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.read = threading.Event()  # let it read
        self.take = threading.Event()  # let the index take it
        self.built = threading.Event()  # it has read everything
        real = clusters_build_module.build

        def held(clusters: Any, read: Any, stop: threading.Event, **options: Any) -> Any:
            _wait(self.read, stop)
            result = real(clusters, read, stop, **options)
            self.built.set()
            _wait(self.take, stop)
            return result

        monkeypatch.setattr(clusters_build_module, "build", held)

    def open(self) -> None:
        self.read.set()
        self.take.set()


def _wait(event: threading.Event, stop: threading.Event) -> None:
    deadline = time.monotonic() + 120
    while not event.wait(0.01) and not stop.is_set() and time.monotonic() < deadline:
        pass


def search(store: SQLiteStore) -> None:
    with store.tx() as tx:
        tx.similar(random_unit(0), floor=-1.0, limit=1)


def settle(store: SQLiteStore) -> None:
    """Search until the index has taken the clusters its background build made."""
    deadline = time.monotonic() + 120
    search(store)
    while store.index.building and time.monotonic() < deadline:
        time.sleep(0.01)
        search(store)
    assert store.index.uses_clusters


def assert_exact(store: Store) -> None:
    """Every filtered search answers what a scan of the database's rows gives."""
    with store.tx() as tx:
        rows = [r for r in tx.copy_rows("memories", None, 10_000) if r["status"] == "live"]
    for seed in range(5):
        query = random_unit(500 + seed)
        for flt in FILTERS:
            visible = [
                r
                for r in rows
                if r["owner"] == flt.get("owner", r["owner"])
                and r["scope"] in flt.get("scopes", [r["scope"]])
                and r["kind"] in flt.get("kinds", [r["kind"]])
            ]
            expected = sorted(
                ((r["id"], round(float(np.asarray(r["embedding"], dtype=np.float32) @ query), 4)) for r in visible),
                key=lambda hit: (-hit[1], hit[0]),
            )
            with store.tx() as tx:
                found = tx.similar(query, floor=0.1, limit=8, **flt)
            assert [(n.memory.id, round(n.similarity, 4)) for n in found] == [e for e in expected if e[1] >= 0.1][:8]


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    held = Gate(monkeypatch)
    yield held
    held.open()


@pytest.mark.parametrize("matrix_rows", [0, 1_000_000], ids=["int8 rows", "float32 matrix"])
def test_searches_scan_the_rows_while_the_graph_is_built_then_search_the_graph(
    tmp_path: Path, gate: Gate, matrix_rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Meanwhile the rows are scanned from the exact scan's float32 matrix, or beyond ``MATRIX_ROWS`` from
    int8 copies of them."""
    monkeypatch.setattr(vector_index_module, "MATRIX_ROWS", matrix_rows)
    store = open_building(tmp_path)
    try:
        fill(store, 300)
        live = live_contents(store)
        assert found_by_index(store, live) == len(live)
        assert store.index.building and not store.index.uses_clusters
        assert_exact(store)
        # Another process writes before the build reads, this one after it has read: the graph
        # holds the first, the index catches up the second once it takes the graph.
        with closing(open_building(tmp_path)) as other:
            before = fill(other, 60, seed=1)
        gate.read.set()
        assert gate.built.wait(120)
        after = fill(store, 60, seed=2)
        with store.tx(write=True) as tx:
            for row in tx.copy_rows("memories", None, 10_000)[:40]:
                tx.set_status(row["id"], Status.INVALIDATED, InvalidationReason.FORGOTTEN, None, at(1))
        assert_exact(store)
        gate.take.set()
        settle(store)
        live = live_contents(store)
        assert set(before) & set(live) and set(after) & set(live)
        assert found_by_index(store, live) == len(live)
        assert_exact(store)
        assert store.save_index(at_least=0) or IndexFiles(tmp_path / "zm.db").snapshots()
    finally:
        store.close()
    store = open_building(tmp_path)
    try:
        assert found_by_index(store, live) == len(live)
        assert store.index.restored_from is not None and store.index.uses_clusters
    finally:
        store.close()


def test_an_account_deleted_during_a_build_leaves_no_vector_in_the_graph_or_a_snapshot(
    tmp_path: Path, gate: Gate
) -> None:
    """The build read the user's rows before they were removed; the index removes them before it saves."""
    store = open_building(tmp_path)
    deleting = cast(Store, AsSystem(store))
    try:
        fill(deleting, 300)
        alice = seqs_of(deleting, "alice")
        search(store)
        gate.read.set()
        assert gate.built.wait(120)
        with deleting.tx(write=True) as tx:
            tx.erase_user("alice", "former-0", at(0))
        store.purge_removed()
        gate.take.set()
        settle(store)
        assert store.save_index(at_least=0)
        assert alice and not alice & snapshot_keys(tmp_path)
        assert not alice & set(np.flatnonzero(store.index._has).tolist())
        live = live_contents(deleting)
        assert found_by_index(store, live) == len(live)
    finally:
        store.close()


def test_waiting_for_the_index_returns_once_the_graph_is_searched(tmp_path: Path) -> None:
    store = open_building(tmp_path)
    try:
        fill(store, 200)
        store.wait_for_index()
        assert store.index.uses_clusters and not store.index.building
        live = live_contents(store)
        assert found_by_index(store, live) == len(live)
    finally:
        store.close()


def test_closing_the_store_stops_its_build(tmp_path: Path, gate: Gate) -> None:
    store = open_building(tmp_path)
    fill(store, 50)
    search(store)
    assert store.index.building
    store.close()
    assert not [t for t in threading.enumerate() if t.name == "zm-clusters-build"]
    assert not IndexFiles(tmp_path / "zm.db").snapshots()


def test_a_failed_build_is_started_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = clusters_build_module.build
    failures = iter([True])

    def failing_once(*args: Any, **options: Any) -> Any:
        if next(failures, False):
            raise OSError("disk I/O error")
        return real(*args, **options)

    monkeypatch.setattr(clusters_build_module, "build", failing_once)
    store = open_building(tmp_path)
    try:
        fill(store, 100)
        live = live_contents(store)
        settle(store)
        assert found_by_index(store, live) == len(live)
    finally:
        store.close()


def test_a_process_killed_while_it_builds_the_graph_leaves_a_store_that_recalls_every_live_memory(
    tmp_path: Path,
) -> None:
    url = sqlite_url(tmp_path)
    with closing(open_building(tmp_path)) as store:
        fill(store, 400)
    rng = random.Random(3)
    for _ in range(6):
        proc = writer("build-forever", url, stdout=subprocess.PIPE)
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "building"
        time.sleep(rng.random() * 0.5)
        kill(proc)
        store = open_building(tmp_path)
        try:
            live = live_contents(store)
            assert found_by_index(store, live) == len(live)
            settle(store)
            assert found_by_index(store, live) == len(live)
        finally:
            store.close()
