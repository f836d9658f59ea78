"""Property: vector search and the database never disagree.

Any sequence of writes, invalidations, restores, moves, re-embeddings,
rolled-back writes, restarts, and (SQLite) saves, deletions, moves and
corruptions of the index's files leaves a store whose ``similar`` answers
exactly what a scan of the database's rows gives: the same rows, in the
same order, with the same similarities, under every filter. SQLite runs each
sequence with an index mode chosen at every restart (exact scan, graph, graph
with filtered rows scanned whole, graph built on a thread while the rows are
scanned); the corpus stays small enough that the graph search is exhaustive,
so any difference is a bug, not approximation.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from tests.pg import PgServer
from tests.store.conftest import sqlite_url
from tests.store.factories import DIM, AsSystem, add_users, at, memory, put, random_unit
from zero_memory.domain.memory import InvalidationReason, Kind, Status
from zero_memory.store import Store
from zero_memory.store.postgres.adapter import PostgresStore
from zero_memory.store.sqlite.adapter import SQLiteStore
from zero_memory.store.sqlite.index_files import IndexFiles

OWNERS = ["alice", "bob"]
SCOPES = ["proj.alice.api", "user.alice", "proj.bob.web"]
KINDS = [Kind.FACT, Kind.TASK]
MODES = [
    {"ann_min_rows": 0, "exact_filter_rows": 0},  # the graph for everything
    {"ann_min_rows": 0, "exact_filter_rows": 3_000},  # the graph, filtered rows scanned whole
    {"ann_min_rows": 20_000, "exact_filter_rows": 3_000},  # the exact scan
    # The graph built on a thread, int8 copies of the rows scanned until the index takes it.
    {"ann_min_rows": 0, "exact_filter_rows": 0, "background_rows": 0},
]
FILTERS: list[dict[str, Any]] = [
    {},
    {"owner": "alice"},
    {"owner": "bob"},
    {"scopes": ["proj.alice.api"]},
    {"scopes": ["user.alice", "proj.bob.web"]},
    {"kinds": [Kind.TASK]},
    {"owner": "alice", "scopes": ["proj.alice.api"], "kinds": [Kind.FACT]},
]


class Rollback(Exception):
    pass


def expected(
    rows: list[dict[str, Any]], query: np.ndarray, flt: dict[str, Any], floor: float, limit: int
) -> list[tuple[str, float]]:
    """The answer a full scan of the database's rows gives."""
    found = []
    for row in rows:
        vector = row["embedding"]
        if row["status"] != "live" or vector is None or len(vector) != DIM:
            continue
        if "owner" in flt and row["owner"] != flt["owner"]:
            continue
        if "scopes" in flt and row["scope"] not in flt["scopes"]:
            continue
        if "kinds" in flt and row["kind"] not in flt["kinds"]:
            continue
        similarity = float(np.asarray(vector, dtype=np.float32) @ query)
        if similarity >= floor:
            found.append((row["id"], similarity))
    # Ordered by the exact similarity, then id (as the stores order).
    found.sort(key=lambda hit: (-round(hit[1], 6), hit[0]))
    return found[:limit]


class IndexAgrees(RuleBasedStateMachine):
    open_store: Callable[[dict[str, int]], Store]
    backend: str

    def __init__(self) -> None:
        super().__init__()
        self.store: Store | None = None
        self.ids: list[str] = []
        self.minutes = 0
        self.stash: Path | None = None

    @initialize(mode=st.sampled_from(MODES))
    def start(self, mode: dict[str, int]) -> None:
        self.store = self.open_store(mode)
        with self.store.tx(write=True) as tx:
            add_users(tx, *OWNERS)

    @property
    def sqlite(self) -> SQLiteStore | None:
        return self.store if isinstance(self.store, SQLiteStore) else None

    def _tick(self) -> float:
        self.minutes += 1
        return self.minutes

    @rule(
        owner=st.sampled_from(OWNERS),
        scope=st.sampled_from(SCOPES),
        kind=st.sampled_from(KINDS),
        seed=st.integers(0, 10**6),
    )
    def insert(self, owner: str, scope: str, kind: Kind, seed: int) -> None:
        assert self.store is not None
        m = memory(f"memory {seed} {len(self.ids)}", owner=owner, scope=scope, kind=kind, minutes=self._tick())
        with self.store.tx(write=True) as tx:
            put(tx, m, random_unit(seed))
        self.ids.append(m.id)

    @precondition(lambda self: bool(self.ids))
    @rule(pick=st.integers(0, 10**6), live=st.booleans())
    def set_status(self, pick: int, live: bool) -> None:
        assert self.store is not None
        status, reason = (Status.LIVE, None) if live else (Status.INVALIDATED, InvalidationReason.FORGOTTEN)
        with self.store.tx(write=True) as tx:
            tx.set_status(self.ids[pick % len(self.ids)], status, reason, None, at(self._tick()))

    @precondition(lambda self: bool(self.ids))
    @rule(pick=st.integers(0, 10**6), scope=st.sampled_from(SCOPES))
    def move(self, pick: int, scope: str) -> None:
        assert self.store is not None
        with self.store.tx(write=True) as tx:
            tx.set_scope(self.ids[pick % len(self.ids)], scope, None, at(self._tick()))

    @precondition(lambda self: bool(self.ids))
    @rule(pick=st.integers(0, 10**6), seed=st.integers(0, 10**6), other_model=st.booleans())
    def reembed(self, pick: int, seed: int, other_model: bool) -> None:
        """A new vector; one of another dimension (another model) leaves the row out of vector search."""
        assert self.store is not None
        vector = random_unit(seed, dim=DIM // 2 if other_model else DIM)
        with self.store.tx(write=True) as tx:
            tx.update_embedding(self.ids[pick % len(self.ids)], vector, "other" if other_model else "test-model")

    @rule(seed=st.integers(0, 10**6), pick=st.integers(0, 10**6))
    def rolled_back_write(self, seed: int, pick: int) -> None:
        """A write transaction that searched after writing (so the index saw its rows), then failed."""
        assert self.store is not None
        m = memory(f"never {seed}", minutes=self._tick())
        vector = random_unit(10**7 + seed)  # no inserted memory shares it
        with pytest.raises(Rollback), self.store.tx(write=True) as tx:
            put(tx, m, vector)
            if self.ids:
                tx.set_status(
                    self.ids[pick % len(self.ids)], Status.INVALIDATED, InvalidationReason.FORGOTTEN, None, at(1)
                )
            assert m.id in [n.memory.id for n in tx.similar(vector, floor=0.99, limit=1)]
            raise Rollback

    @rule(mode=st.sampled_from(MODES))
    def restart(self, mode: dict[str, int]) -> None:
        assert self.store is not None
        self.store.close()
        self.store = self.open_store(mode)
        if self.sqlite is not None:
            with self.sqlite.tx() as tx:
                tx.similar(random_unit(0), floor=0.0, limit=1)
            event(f"restarted from a snapshot: {self.sqlite.index.restored_from is not None}")

    @precondition(lambda self: self.sqlite is not None)
    @rule()
    def save_index(self) -> None:
        assert self.sqlite is not None
        self.sqlite.save_index()

    @precondition(lambda self: self.sqlite is not None)
    @rule()
    def delete_index_files(self) -> None:
        assert self.sqlite is not None
        shutil.rmtree(IndexFiles(self.sqlite.path).folder, ignore_errors=True)

    @precondition(lambda self: self.sqlite is not None)
    @rule()
    def stash_index_files(self) -> None:
        """Move the index's files away (a later rule may move these, by then stale, back)."""
        assert self.sqlite is not None
        folder = IndexFiles(self.sqlite.path).folder
        if folder.exists():
            self.stash = Path(tempfile.mkdtemp(prefix="zm-stash-")) / "index"
            shutil.move(folder, self.stash)

    @precondition(lambda self: self.sqlite is not None and self.stash is not None)
    @rule()
    def bring_back_stale_index_files(self) -> None:
        assert self.sqlite is not None and self.stash is not None
        folder = IndexFiles(self.sqlite.path).folder
        shutil.rmtree(folder, ignore_errors=True)
        shutil.move(self.stash, folder)
        self.stash = None

    @precondition(lambda self: self.sqlite is not None)
    @rule(keep=st.integers(0, 4096))
    def corrupt_index_file(self, keep: int) -> None:
        assert self.sqlite is not None
        for snapshot in IndexFiles(self.sqlite.path).snapshots()[:1]:
            data = snapshot.path.read_bytes()
            snapshot.path.write_bytes(data[: min(keep, len(data) - 1)] + b"\x00" * 7)

    @invariant()
    def search_agrees_with_the_rows(self) -> None:
        if self.store is None:
            return
        with self.store.tx() as tx:
            rows = tx.copy_rows("memories", None, 10_000)
        for seed, flt in enumerate(FILTERS):
            query = random_unit(1000 + seed + self.minutes)
            for floor, limit in ((-1.0, 100), (0.1, 5)):
                with self.store.tx() as tx:
                    found = tx.similar(query, floor=floor, limit=limit, **flt)
                want = expected(rows, query, flt, floor, limit)
                assert [n.memory.id for n in found] == [memory_id for memory_id, _ in want], (flt, floor, limit)
                # The same float32 dot product summed in another order differs in its last bits: rounding
                # both to four decimals would fail the day a similarity lies on the rounding boundary.
                assert [n.similarity for n in found] == pytest.approx([s for _, s in want], abs=1e-6)

    def teardown(self) -> None:
        if self.store is not None:
            self.store.close()
        if self.stash is not None:
            shutil.rmtree(self.stash.parent, ignore_errors=True)


MACHINE_SETTINGS = settings(
    max_examples=25, stateful_step_count=25, deadline=None, suppress_health_check=list(HealthCheck)
)


@pytest.mark.timeout(1_200)  # a few hundred searches and restarts: minutes on a crowded machine
def test_sqlite_index_and_database_never_disagree() -> None:
    class SQLiteMachine(IndexAgrees):
        def open_store(self, mode: dict[str, int]) -> Store:  # type: ignore[override]
            if not hasattr(self, "folder"):
                self.folder = Path(tempfile.mkdtemp(prefix="zm-agree-"))
            return SQLiteStore.open(sqlite_url(self.folder), dim=DIM, **mode)

        def teardown(self) -> None:
            super().teardown()
            shutil.rmtree(self.folder, ignore_errors=True)

    SQLiteMachine.TestCase.settings = MACHINE_SETTINGS
    SQLiteMachine.TestCase().runTest()


@pytest.mark.timeout(1_200)
def test_postgres_search_and_database_never_disagree(pg_server: PgServer) -> None:
    class PostgresMachine(IndexAgrees):
        def open_store(self, mode: dict[str, int]) -> Store:  # type: ignore[override]
            if not hasattr(self, "url"):
                self.url = pg_server.fresh_url()
            # Acting as a system pass: the machine's operations cross owners (row-level security is on).
            return cast(Store, AsSystem(PostgresStore.open(self.url, dim=DIM)))

        def teardown(self) -> None:
            super().teardown()
            pg_server.drop(self.url)

    PostgresMachine.TestCase.settings = settings(MACHINE_SETTINGS, max_examples=6, stateful_step_count=15)
    PostgresMachine.TestCase().runTest()
