"""The SQLite store's vector index: snapshots, other processes, kills, filters."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import threading
import time
from collections.abc import Collection, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.store.conftest import sqlite_url
from tests.store.factories import DIM, AsSystem, add_users, at, brief_of, memory, put, random_unit
from tests.store.processes import kill, writer
from tests.store.writer import found_by_index, vector_for
from zero_memory.domain.memory import InvalidationReason, Kind, Status
from zero_memory.store import Store
from zero_memory.store.sqlite import clusters as clusters_module
from zero_memory.store.sqlite import vector_index as vector_index_module
from zero_memory.store.sqlite import vectors as sqlite_vectors
from zero_memory.store.sqlite.adapter import SQLiteStore
from zero_memory.store.sqlite.clusters import Clusters, Selection, probes_for
from zero_memory.store.sqlite.index_files import IndexFiles
from zero_memory.store.sqlite.vector_index import Filter, Row, State, VectorIndex

INDEXED = {"ann_min_rows": 0, "exact_filter_rows": 0}
OWNERS = ["alice", "bob", "carol"]
SCOPES = ["proj.alice.api", "user.alice", "proj.bob.web", "user.bob", "user.carol"]


def open_indexed(folder: Path) -> SQLiteStore:
    return SQLiteStore.open(sqlite_url(folder), dim=DIM, **INDEXED)


def fill(store: Store, count: int, *, seed: int = 0) -> list[str]:
    """``count`` memories spread over owners, scopes, kinds and states; returns their contents."""
    rng = random.Random(seed)
    contents = []
    with store.tx(write=True) as tx:
        if tx.get_user("alice") is None:
            add_users(tx, *OWNERS)
        for n in range(count):
            content = f"memory {seed}-{n}"
            status = Status.LIVE if rng.random() < 0.8 else Status.INVALIDATED
            m = memory(
                content,
                owner=rng.choice(OWNERS),
                scope=rng.choice(SCOPES),
                kind=rng.choice([Kind.FACT, Kind.TASK, Kind.DECISION]),
                status=status,
                reason=None if status == Status.LIVE else InvalidationReason.FORGOTTEN,
                minutes=n,
            )
            put(tx, m, vector_for(content))
            contents.append(content)
    return contents


def live_contents(store: Store) -> list[str]:
    with store.tx() as tx:
        return [row["content"] for row in tx.copy_rows("memories", None, 100_000) if row["status"] == "live"]


@pytest.fixture
def indexed_store(tmp_path: Path) -> Iterator[SQLiteStore]:
    store = open_indexed(tmp_path)
    yield store
    store.close()


@pytest.fixture(params=["clusters", "clusters-scan", "exact", "postgres"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """Every way a search is answered: the SQLite graph, the graph scanning filtered rows, the exact scan,
    and PostgreSQL."""
    if request.param == "postgres":
        yield _postgres(request)
        return
    options = {
        "clusters": INDEXED,
        "clusters-scan": {"ann_min_rows": 0, "exact_filter_rows": 3_000},
        "exact": {},
    }[request.param]
    store = SQLiteStore.open(sqlite_url(tmp_path), dim=DIM, **options)
    yield store
    store.close()


def _postgres(request: pytest.FixtureRequest) -> Store:
    from zero_memory.store.postgres.adapter import PostgresStore

    server = request.getfixturevalue("pg_server")
    url = server.fresh_url()
    store = PostgresStore.open(url, dim=DIM)
    request.addfinalizer(lambda: (store.close(), server.drop(url)))
    # Acting as a system pass: these searches cross owners (row-level security is on).
    return cast(Store, AsSystem(store))


def exact_order(rows: list[dict[str, Any]], query: np.ndarray) -> list[tuple[str, float]]:
    """Each row's id and exact similarity to ``query``, nearest first. Similarities are compared within
    1e-6, not rounded: the same float32 dot product summed in another order differs in its last bits,
    and rounding both sides fails the day one lies on the rounding boundary."""
    scored = ((r["id"], float(np.asarray(r["embedding"], dtype=np.float32) @ query)) for r in rows)
    return sorted(scored, key=lambda hit: (-hit[1], hit[0]))


@pytest.mark.parametrize(
    "flt",
    [
        {"owner": "bob"},
        {"scopes": ["proj.alice.api", "user.carol"]},
        {"scopes": ["user.alice"], "kinds": [Kind.TASK]},
        {"owner": "alice", "scopes": ["proj.bob.web"]},
        {"kinds": [Kind.DECISION], "exclude_every_other": True},
    ],
)
def test_filtered_search_returns_exactly_the_visible_rows(any_store: Store, flt: dict[str, Any]) -> None:
    fill(any_store, 300)
    flt = dict(flt)
    with any_store.tx() as tx:
        rows = [r for r in tx.copy_rows("memories", None, 1_000) if r["status"] == "live"]
    visible = [
        r
        for r in rows
        if r["owner"] == flt.get("owner", r["owner"])
        and r["scope"] in flt.get("scopes", [r["scope"]])
        and r["kind"] in flt.get("kinds", [r["kind"]])
    ]
    excluded = {r["id"] for r in visible[::2]} if flt.pop("exclude_every_other", False) else set()
    query = random_unit(42)
    with any_store.tx() as tx:
        found = tx.similar(query, floor=-1.0, limit=1_000, exclude=excluded, **flt)
    expected = [hit for hit in exact_order(visible, query) if hit[0] not in excluded]
    assert [n.memory.id for n in found] == [memory_id for memory_id, _ in expected]
    assert [n.similarity for n in found] == pytest.approx([s for _, s in expected], abs=1e-6)
    assert len(found) > 0


@pytest.mark.parametrize("beside_min_rows", [0, sqlite_vectors.BESIDE_MIN_ROWS], ids=["thread", "in-turn"])
@pytest.mark.parametrize(
    "flt", [{}, {"scopes": ["proj.alice.api", "user.carol"]}, {"scopes": SCOPES, "kinds": [Kind.TASK]}]
)
def test_a_search_run_beside_reads_of_its_transaction_finds_what_similar_finds(
    any_store: Store, flt: dict[str, Any], beside_min_rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recall's search runs its full text beside the index's search (on SQLite, in a large index, on
    another thread, reading the transaction meanwhile; in a smaller one before it): the rows are still
    read, filtered and scored in the transaction, its own writes included, and what runs beside sees them
    too."""
    monkeypatch.setattr(sqlite_vectors, "BESIDE_MIN_ROWS", beside_min_rows)
    fill(any_store, 300)
    query = random_unit(7)
    with any_store.tx(write=True) as tx:
        put(tx, memory("written in this transaction", owner="alice", scope="user.carol", kind=Kind.TASK), query)
        search = tx.vector_search(floor=-1.0, limit=40, **flt)
        neighbours, near = search.run(lambda: query, lambda: tx.similar(query, floor=-1.0, limit=40, **flt))
        found = [(n.brief, round(n.similarity, 6)) for n in neighbours]
        expected = [(brief_of(n.memory), round(n.similarity, 6)) for n in near]
    assert found == expected
    assert len(found) == 40


def test_a_search_for_a_few_rows_returns_the_exact_nearest_ones(indexed_store: SQLiteStore) -> None:
    """Only the first of the graph's hits in its own (int8) order are read and scored: the margin
    they keep holds the exact nearest ones, whose order and similarities are exact."""
    fill(indexed_store, 400)
    with indexed_store.tx() as tx:
        rows = [r for r in tx.copy_rows("memories", None, 1_000) if r["status"] == "live"]
    for seed in range(30):
        query = random_unit(1_000 + seed)
        exact = exact_order(rows, query)[:5]
        with indexed_store.tx() as tx:
            found = tx.similar(query, floor=-1.0, limit=5)
        assert [n.memory.id for n in found] == [memory_id for memory_id, _ in exact]
        assert [n.similarity for n in found] == pytest.approx([s for _, s in exact], abs=1e-6)


def test_a_filter_scanned_whole_finds_every_row_just_above_a_high_floor(tmp_path: Path) -> None:
    """A filter that keeps few rows is scanned from the graph's int8 copies, which usearch truncates
    (about 0.93 of unit length at 512 dimensions): scored by their raw product, a row 0.90 similar came
    out 0.84 and was lost below a floor of 0.89 (the dedup's), as was any row up to 0.95."""
    dim = 512
    store = SQLiteStore.open(sqlite_url(tmp_path), dim=dim, ann_min_rows=0, exact_filter_rows=3_000)
    query = random_unit(7, dim)
    similarities = [0.891, 0.9, 0.92, 0.95, 0.99]
    try:
        with store.tx(write=True) as tx:
            add_users(tx, "alice")
            for n in range(200):
                put(tx, memory(f"other {n}", scope="user.alice", minutes=n), random_unit(100 + n, dim))
            for n, similarity in enumerate(similarities):
                other = random_unit(1_000 + n, dim)
                other -= (other @ query) * query
                other /= np.linalg.norm(other)
                vector = similarity * query + np.sqrt(1 - similarity**2) * other
                put(tx, memory(f"near {similarity}", minutes=300 + n), vector.astype(np.float32))
        with store.tx() as tx:
            found = tx.similar(query, floor=0.89, limit=10, owner="alice", scopes=["proj.alice.api"])
        assert [round(n.similarity, 3) for n in found] == sorted(similarities, reverse=True)
    finally:
        store.close()


def test_candidate_rows_are_read_by_seq_whatever_the_filter(indexed_store: SQLiteStore) -> None:
    """A long list of candidates with an owner filter once made SQLite walk the owner's index whole for
    each chunk of candidates instead of looking the rows up: every read of candidates is by row number."""
    fill(indexed_store, 600)
    queries = np.stack([random_unit(seed) for seed in range(40)])
    with indexed_store.tx() as tx:
        statements: list[str] = []
        tx.conn.set_trace_callback(statements.append)
        try:
            swept = tx.similar_many(queries, floor=-1.0, limit=20, owner="alice", excludes=[[] for _ in queries])
            tx.similar(queries[0], floor=-1.0, limit=200, scopes=["proj.alice.api", "user.alice"])
        finally:
            tx.conn.set_trace_callback(None)
        reads = [s for s in statements if "FROM memories" in s and "seq IN" in s]
        plans = [detail for s in reads for *_, detail in tx.conn.execute(f"EXPLAIN QUERY PLAN {s}").fetchall()]
    assert all(len(hits) == 20 for hits in swept)
    assert any("owner = ?" in s.replace("'alice'", "?") for s in reads)
    assert plans and all("INTEGER PRIMARY KEY" in detail for detail in plans), plans


def test_a_restart_starts_from_the_saved_snapshot_and_catches_up(tmp_path: Path) -> None:
    store = open_indexed(tmp_path)
    fill(store, 200)
    assert found_by_index(store, live_contents(store)[:5]) == 5
    assert store.save_index()
    store.close()
    with closing(open_indexed(tmp_path)) as other_writer:  # another process's writes after the snapshot
        later = fill(other_writer, 50, seed=1)
    store = open_indexed(tmp_path)
    try:
        live = live_contents(store)
        assert found_by_index(store, live) == len(live)
        assert store.index.restored_from is not None
        assert set(later) & set(live)
    finally:
        store.close()


def test_a_restart_reads_the_rows_states_from_their_index_without_the_vectors(tmp_path: Path) -> None:
    """Loading a snapshot reads every row's state; read from the table, each row's vector was read on the way
    to the columns after it (13.8 s at a million memories, 2.6 s by the index of migration 0027)."""
    store = open_indexed(tmp_path)
    fill(store, 200)
    assert found_by_index(store, live_contents(store)[:5]) == 5
    assert store.save_index()
    store.close()
    store = open_indexed(tmp_path)
    try:
        with store.tx() as tx:
            statements: list[str] = []
            tx.conn.set_trace_callback(statements.append)
            try:
                store.index.refresh(tx)
            finally:
                tx.conn.set_trace_callback(None)
            states = [s for s in statements if "embedding IS NOT NULL" in s]
            plans = [detail for s in states for *_, detail in tx.conn.execute(f"EXPLAIN QUERY PLAN {s}").fetchall()]
        assert store.index.restored_from is not None
        assert plans and all("USING INDEX memories_row_states" in detail for detail in plans), plans
        live = live_contents(store)
        assert found_by_index(store, live) == len(live)
    finally:
        store.close()


def test_a_snapshot_of_the_graph_the_index_kept_before_is_removed_and_the_clusters_built_from_the_database(
    tmp_path: Path,
) -> None:
    """An upgraded store finds the HNSW graph's snapshot (``…-linked512.usearch``) next to its database:
    it is not read, it is removed, and every live memory is found through clusters built anew."""
    store = open_indexed(tmp_path)
    fill(store, 150)
    store.close()
    folder = tmp_path / "zm.db-index"
    folder.mkdir(exist_ok=True)
    old = folder / "snapshot-150-150-01ARZ3NDEKTSV4RRFFQ69G5FAV-linked512.usearch"
    old.write_bytes(b"usearch graph" * 100)
    store = open_indexed(tmp_path)
    try:
        live = live_contents(store)
        assert found_by_index(store, live) == len(live)
        assert store.index.restored_from is None and store.index.uses_clusters
        assert not old.exists()
        assert store.save_index()
    finally:
        store.close()
    (snapshot,) = IndexFiles(tmp_path / "zm.db").snapshots()
    assert snapshot.name.endswith(".faiss")


def test_a_restart_searches_the_clusters_of_the_snapshot_with_their_own_lists(tmp_path: Path) -> None:
    store = open_indexed(tmp_path)
    fill(store, 150)
    found_by_index(store, ["warm"])
    assert store.save_index()
    lists = store.index._clusters.lists if store.index._clusters is not None else 0
    store.close()
    (snapshot,) = IndexFiles(tmp_path / "zm.db").snapshots()
    store = open_indexed(tmp_path)
    try:
        live = live_contents(store)
        assert found_by_index(store, live) == len(live)
        assert store.index.restored_from == snapshot.name
        assert store.index._clusters is not None
        assert (store.index._clusters.lists, store.index._clusters.probes) == (lists, probes_for(lists))
    finally:
        store.close()


def test_the_lists_and_the_lists_scanned_grow_with_the_rows() -> None:
    """More rows, more lists (about four times their square root, as powers of two); more lists, more of
    them scanned, though a smaller share: never fewer, never more than there are."""
    sizes = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000]
    lists = [clusters_module.lists_for(rows) for rows in sizes]
    assert lists == sorted(lists) and all(1 <= n <= rows for n, rows in zip(lists, sizes, strict=True))
    assert (clusters_module.lists_for(100_000), clusters_module.lists_for(1_000_000)) == (1_024, 4_096)
    probes = [probes_for(n) for n in lists]
    assert probes == sorted(probes) and all(1 <= p <= n for p, n in zip(probes, lists, strict=True))
    shares = [p / n for p, n in zip(probes, lists, strict=True) if n >= 256]
    assert shares == sorted(shares, reverse=True)
    for n, measured in clusters_module.PROBES:
        assert probes_for(n) == measured


def test_clusters_are_trained_again_as_the_rows_outgrow_them(tmp_path: Path) -> None:
    """Clusters trained for few rows hold many more in each list as the corpus grows: once the rows call
    for twice the lists, the index is built again from the database, and loses nothing on the way."""
    store = open_indexed(tmp_path)
    try:
        fill(store, 40)
        found_by_index(store, ["warm"])
        assert store.index._clusters is not None
        first = store.index._clusters.lists
        fill(store, 700, seed=1)
        live = live_contents(store)
        assert found_by_index(store, live) == len(live)
        assert store.index._clusters.lists >= 2 * first
        assert store.index._clusters.lists == clusters_module.lists_for(store.index.indexed)
    finally:
        store.close()


def test_room_made_in_the_lists_holds_no_row_and_the_rows_filed_after_are_found() -> None:
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((3_000, DIM)).astype(np.float32)
    clusters = Clusters.trained(vectors[:1_000], lists=64)
    clusters.add(np.arange(10), vectors[:10])
    counts = clusters.counts(vectors[10:])
    assert counts.sum() == 2_990
    clusters.reserve(counts)
    assert len(clusters) == 10 and sorted(clusters.keys().tolist()) == list(range(10))
    clusters.add(np.arange(10, 3_000), vectors[10:])
    keys, _ = clusters.search(vectors, 1)
    assert (keys[:, 0] == np.arange(3_000)).all()


def test_a_search_of_the_clusters_returns_only_the_selected_rows_and_scans_more_lists_for_more_hits() -> None:
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((4_000, DIM)).astype(np.float32)
    clusters = Clusters.trained(vectors[:2_000], lists=256)
    clusters.add(np.arange(4_000), vectors)
    mask = np.zeros(4_000, dtype=bool)
    mask[rng.choice(4_000, 300, replace=False)] = True
    keys, sims = clusters.search(vectors[:5], 50, within=Selection.of(mask))
    assert (keys >= 0).all() and mask[keys].all()
    assert (np.diff(sims, axis=1) <= 1e-6).all()
    assert not mask[0] or keys[0][0] == 0
    everything, _ = clusters.search(vectors[:1], 4_000, within=Selection.of(np.ones(4_000, dtype=bool)))
    assert sorted(everything[0].tolist()) == list(range(4_000))  # asked for every row: every list scanned
    clusters.remove(np.arange(0, 4_000, 2))
    keys, _ = clusters.search(vectors[:1], 4_000)
    assert sorted(k for k in keys[0].tolist() if k >= 0) == list(range(1, 4_000, 2))


def test_a_snapshot_of_another_history_of_the_database_is_not_used(tmp_path: Path) -> None:
    """A database restored from a backup, then written again: the newer snapshot describes other rows."""
    store = open_indexed(tmp_path)
    fill(store, 100)
    store.close()
    backup = tmp_path / "backup.db"
    shutil.copy(tmp_path / "zm.db", backup)
    store = open_indexed(tmp_path)
    fill(store, 100, seed=1)
    found_by_index(store, ["warm"])
    assert store.save_index()
    store.close()
    (tmp_path / "zm.db").unlink()
    shutil.copy(backup, tmp_path / "zm.db")
    store = open_indexed(tmp_path)
    later = fill(store, 120, seed=2)  # as many changes as the lost ones, and more
    store.close()
    store = open_indexed(tmp_path)
    try:
        live = live_contents(store)
        assert found_by_index(store, live) == len(live)
        assert store.index.restored_from is None
        with store.tx() as tx:
            # None of the lost rows comes back: every hit is a row of this database.
            hits = tx.similar(vector_for("memory 1-5"), floor=-1.0, limit=500)
        assert {h.memory.content for h in hits} <= set(live)
        assert set(later) & set(live)
    finally:
        store.close()


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty"])
def test_a_damaged_snapshot_is_rebuilt_from_the_database(tmp_path: Path, damage: str) -> None:
    store = open_indexed(tmp_path)
    fill(store, 150)
    found_by_index(store, ["warm"])
    assert store.save_index()
    store.close()
    (snapshot,) = IndexFiles(tmp_path / "zm.db").snapshots()
    data = snapshot.path.read_bytes()
    snapshot.path.write_bytes(
        {"truncated": data[: len(data) // 2], "garbage": b"\x07" * len(data), "empty": b""}[damage]
    )
    store = open_indexed(tmp_path)
    try:
        live = live_contents(store)
        assert found_by_index(store, live) == len(live)
        assert store.index.restored_from is None
    finally:
        store.close()


def test_a_rolled_back_write_leaves_nothing_in_the_index(indexed_store: SQLiteStore) -> None:
    fill(indexed_store, 50)
    live_before = live_contents(indexed_store)
    with pytest.raises(RuntimeError), indexed_store.tx(write=True) as tx:
        put(tx, memory("ghost"), vector_for("ghost"))
        first = next(r["id"] for r in tx.copy_rows("memories", None, 100) if r["content"] == live_before[0])
        tx.set_status(first, Status.INVALIDATED, InvalidationReason.FORGOTTEN, None, at())
        assert found_by_index(indexed_store, ["ghost"]) == 1  # this transaction sees its own rows
        assert found_by_index(indexed_store, live_before[:1]) == 0
        raise RuntimeError("fails after searching")
    # The next write reuses the rolled-back counter values and row number.
    with indexed_store.tx(write=True) as tx:
        put(tx, memory("real"), vector_for("real"))
    assert found_by_index(indexed_store, ["ghost"]) == 0
    live = live_contents(indexed_store)
    assert live == [*live_before, "real"]
    assert found_by_index(indexed_store, live) == len(live)


def test_two_processes_writing_one_database_see_each_others_writes_through_the_index(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path)
    with closing(open_indexed(tmp_path)) as store:
        fill(store, 10)
    tags = ["left", "right"]
    procs = [writer("share", url, tag, "40", str(tmp_path), ",".join(tags), stdout=subprocess.PIPE) for tag in tags]
    outputs = [proc.communicate(timeout=300)[0] for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0]
    for output in outputs:
        assert json.loads(output.strip().splitlines()[-1]) == {"left": 40, "right": 40}


def test_a_process_killed_while_saving_the_index_leaves_a_store_that_recalls_every_live_memory(
    tmp_path: Path,
) -> None:
    url = sqlite_url(tmp_path)
    with closing(open_indexed(tmp_path)) as store:
        fill(store, 10)
    folder = IndexFiles(tmp_path / "zm.db").folder
    rng = random.Random(5)
    mid_write = 0
    for round_ in range(6):
        proc = writer("save-forever", url, stdout=subprocess.PIPE)
        assert proc.stdout is not None
        for _ in range(rng.randint(1, 3)):
            assert proc.stdout.readline().strip() == "saving"
        if round_ % 2 == 0:
            # Kill while a temporary file is being written, whenever one is seen.
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not any(p.name.startswith(".tmp-") for p in _listing(folder)):
                time.sleep(0.0005)
            mid_write += any(p.name.startswith(".tmp-") for p in _listing(folder))
        else:
            time.sleep(rng.random() * 0.05)
        kill(proc)
        store = open_indexed(tmp_path)
        try:
            live = live_contents(store)
            assert found_by_index(store, live) == len(live)
            assert store.save_index() or store.index.restored_from is not None
        finally:
            store.close()
        assert not any(p.name.startswith(".tmp-") for p in _listing(folder))
    assert mid_write > 0


def _listing(folder: Path) -> list[Path]:
    try:
        return list(folder.iterdir())
    except FileNotFoundError:
        return []


def snapshot_keys(folder: Path) -> set[int]:
    """The keys of every snapshot saved beside the database."""
    found: set[int] = set()
    for snapshot in IndexFiles(folder / "zm.db").snapshots():
        found.update(int(k) for k in Clusters.restore(snapshot.path, DIM).keys())  # noqa: SIM118 (not a dict)
    return found


def seqs_of(store: Store, owner: str) -> set[int]:
    with store.tx() as tx:
        return {r["seq"] for r in tx._query("SELECT seq FROM memories WHERE owner = ?", (owner,))}  # type: ignore[attr-defined]


def test_an_account_deletion_leaves_no_vector_of_the_user_in_any_process_or_snapshot(tmp_path: Path) -> None:
    """The deleting process rewrites the snapshot; another process that had the vectors (a running server)
    drops them at its next refresh, and no snapshot it saves afterwards holds them."""
    deleting = cast(Store, AsSystem(open_indexed(tmp_path)))
    fill(deleting, 300)
    server = open_indexed(tmp_path)
    with closing(server):
        probe = vector_for("memory 0-7")
        for store in (server, deleting):
            with store.tx() as tx:
                assert tx.similar(probe, floor=-1.0, limit=300)  # each process's graph holds every vector
        assert deleting.save_index()  # type: ignore[attr-defined]
        alice = seqs_of(deleting, "alice")
        assert alice and alice <= snapshot_keys(tmp_path)

        with deleting.tx(write=True) as tx:
            counts = tx.erase_user("alice", "former-0", at(0))
        deleting.purge_removed()

        assert counts["memories"] == len(alice)
        assert not alice & snapshot_keys(tmp_path)
        assert server.save_index(at_least=1)  # the server catches up before it saves
        assert not alice & snapshot_keys(tmp_path)
        assert not alice & set(np.flatnonzero(server.index._has).tolist())
        with server.tx() as tx:
            assert {n.memory.owner for n in tx.similar(probe, floor=-1.0, limit=300)} == {"bob", "carol"}
    deleting.close()


class _Rows:
    """A database of ``count`` live rows as the index reads it, noting the index's state at each page."""

    def __init__(self, index: VectorIndex, count: int) -> None:
        self.index = index
        self.rows: list[Row] = [
            (seq, "alice", "user.alice", "fact", True, random_unit(seq).tobytes(), seq) for seq in range(1, count + 1)
        ]
        self.seen: list[tuple[int, bool]] = []  # (rows indexed, whether the float32 matrix holds them)

    def changed_rows(self, after_rev: int, limit: int) -> list[Row]:
        self.seen.append((self.index.indexed, self.index._matrix is not None))
        return [row for row in self.rows if row[6] > after_rev][:limit]

    def rows_by_seq(self, seqs: Collection[int]) -> list[Row]:
        return [row for row in self.rows if row[0] in set(seqs)]

    def row_states(self, after_seq: int, limit: int) -> list[State]:
        return []

    def anchor(self, watermark: int) -> tuple[int, str] | None:
        return None

    def anchor_holds(self, watermark: int, anchor_rev: int, anchor_id: str) -> bool:
        return False

    def can_save(self) -> bool:
        return False


def test_catching_up_a_large_database_keeps_int8_copies_past_the_bound_and_makes_clusters_for_every_row(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The exact scan's matrix holds at most a page beyond the bound: a million rows never pass through it
    (2 GB of float32), they are kept as int8 copies page by page; the clusters are made once every row is
    read, with the lists for all of them (not for the rows read when the bound was passed). The bound is the
    larger of ``MATRIX_ROWS`` (none here) and the rows for clusters built in the background."""
    monkeypatch.setattr(vector_index_module, "PAGE", 50)
    monkeypatch.setattr(vector_index_module, "MATRIX_ROWS", 0)
    trained: list[int] = []
    train = Clusters.trained.__func__  # type: ignore[attr-defined]

    def counted(cls: type[Clusters], sample: np.ndarray, *, lists: int) -> Clusters:
        trained.append(lists)
        return cast(Clusters, train(cls, sample, lists=lists))

    monkeypatch.setattr(Clusters, "trained", classmethod(counted))
    index = VectorIndex(DIM, ann_min_rows=120, exact_filter_rows=0, background_rows=120)
    source = _Rows(index, 600)

    index.refresh(source)

    assert index.uses_clusters and index.indexed == 600
    assert trained == [clusters_module.lists_for(600)]  # once, for every row
    assert not any(in_matrix for indexed, in_matrix in source.seen if indexed >= 120 + 50)
    probe = np.frombuffer(cast(bytes, source.rows[417][5]), dtype=np.float32)
    hits = index.candidates(probe, Filter.of(None, "alice"), want=5, floor=-1.0)
    assert hits[0][0] == 418


def test_a_row_added_then_removed_within_one_page_leaves_no_vector_in_the_graph() -> None:
    """A memory written, then removed with its account, both after the index last looked: the page holds
    its vector and then its removal, and the graph (which snapshots are saved from) must not keep it."""
    index = VectorIndex(DIM, ann_min_rows=0, exact_filter_rows=0)
    source = _Rows(index, 10)
    index.refresh(source)
    assert index.uses_clusters
    source.rows += [
        (11, "alice", "user.alice", "fact", True, random_unit(11).tobytes(), 11),
        (11, "", "", "", False, None, 12),
    ]
    index.refresh(source)
    assert index._clusters is not None
    assert not index._clusters.contains(np.array([11]))[0]
    assert not index._has[11]


def test_memories_with_one_vector_score_exactly_alike_and_come_in_id_order(any_store: Store) -> None:
    """Copies of one vector are one similarity, wherever they sit among the candidates: ties come in id
    order on every store. (SQLite scored the candidates by BLAS's matrix-vector product, which rounds
    identical rows differently by their place in the matrix: two copies scored -0.136847496 and
    -0.136847511, rounded to six decimals on either side of a step, and came out of id order.)"""
    rng = np.random.default_rng(3)
    copied = random_unit(11)
    with any_store.tx(write=True) as tx:
        add_users(tx, "alice")
        for n in range(3):
            put(tx, memory(f"other {n}", minutes=n), random_unit(100 + n))
    copies: list[str] = []
    for n in range(12):
        with any_store.tx(write=True) as tx:
            copy = memory(f"copy {n}", minutes=10 + n)
            put(tx, copy, copied)
            copies.append(copy.id)
            if n % 2:
                vector = rng.standard_normal(DIM).astype(np.float32)
                put(tx, memory(f"between {n}", minutes=10 + n), vector / np.linalg.norm(vector))
        for seed in range(8):
            with any_store.tx() as tx:
                found = tx.similar(random_unit(500 + seed), floor=-1.0, limit=100)
            scored = [(hit.memory.id, hit.similarity) for hit in found if hit.memory.id in copies]
            assert len(scored) == len(copies)
            assert len({similarity for _, similarity in scored}) == 1, scored
            assert [memory_id for memory_id, _ in scored] == sorted(copies)


def test_a_search_that_finds_enough_changes_unsaved_leaves_the_snapshot_to_a_thread_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The search that found a snapshot due wrote it, fsync included, before it answered (47 ms at 30,000
    rows); it is written by the index's own thread, in a read transaction of its own."""
    monkeypatch.setattr(vector_index_module, "SAVE_MIN_ROWS", 10)
    writers: list[str] = []
    write = IndexFiles.write

    def recorded(self: IndexFiles, *args: Any, **kwargs: Any) -> Any:
        writers.append(threading.current_thread().name)
        return write(self, *args, **kwargs)

    monkeypatch.setattr(IndexFiles, "write", recorded)
    store = open_indexed(tmp_path)
    try:
        fill(store, 60)
        with store.tx() as tx:
            tx.similar(random_unit(1), floor=-1.0, limit=3)
        saver = getattr(store.index, "_saver", None)
        if saver is not None:
            saver.join(60)
        assert writers == ["zm-index-save"]
        assert IndexFiles(tmp_path / "zm.db").snapshots()
    finally:
        store.close()


def test_the_exact_scans_matrix_takes_arriving_rows_in_place() -> None:
    """Room for every row the float32 matrix may hold is made when it first grows: rows that arrive later (an
    import another process makes) are written in place, and the rows there are never copied again."""
    index = VectorIndex(DIM, ann_min_rows=1_000_000, exact_filter_rows=0)
    source = _Rows(index, 3)
    index.refresh(source)
    matrix = index._matrix
    source.rows = _Rows(index, 5_000).rows
    index.refresh(source)
    assert index._matrix is matrix and index.indexed == 5_000
    probe = np.frombuffer(cast(bytes, source.rows[4_321][5]), dtype=np.float32)
    assert index.candidates(probe, Filter.of(None, "alice"), want=3, floor=-1.0)[0][0] == 4_322


def _vm_flags(array: np.ndarray) -> set[str]:
    """The kernel's flags of the mapping that holds ``array``'s first byte (``/proc/self/smaps``)."""
    address = array.ctypes.data
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()[0]
        if "-" in head and ":" not in head:
            start, end = (int(part, 16) for part in head.split("-"))
            inside = start <= address < end
        elif inside and line.startswith("VmFlags:"):
            return set(line.split()[1:])
    raise AssertionError("no mapping holds the array")


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="the kernel's mappings are read from /proc")
def test_the_arrays_a_catch_up_writes_into_ask_for_small_pages() -> None:
    """The exact scan's matrix and the int8 copies grow into memory a search's catch-up writes: advised
    against huge pages (``nh``), a first write never waits for the kernel to compact memory for one."""
    index = VectorIndex(DIM, ann_min_rows=1_000_000, exact_filter_rows=0)
    source = _Rows(index, 50)
    index.refresh(source)
    assert index._matrix is not None and "nh" in _vm_flags(index._matrix)
    ordinary = np.zeros_like(index._matrix)
    assert "nh" not in _vm_flags(ordinary)  # numpy's own large arrays may take huge pages
    index._keep_int8()
    assert index._int8 is not None and "nh" in _vm_flags(index._int8.codes)


def test_the_exact_scans_matrix_has_a_row_for_every_state_the_index_keeps() -> None:
    """Row numbers past the matrix's first room (an import's, read before the first clusters are built)
    grow the states by doubling; the matrix grows with them, and a scan finds the highest row."""
    index = VectorIndex(DIM, ann_min_rows=1_000_000, exact_filter_rows=0)
    source = _Rows(index, 3)
    index.refresh(source)
    far = vector_index_module.MATRIX_ROWS // 2 + 3_000
    for rev, seq in enumerate((far - 1, far), start=4):  # the second doubles the states past the matrix's room
        source.rows.append((seq, "alice", "user.alice", "fact", True, random_unit(seq).tobytes(), rev))
        index.refresh(source)
    assert index._matrix is not None and len(index._matrix) >= len(index._live) > far
    assert index.candidates(random_unit(far), Filter.of(None, "alice"), want=1, floor=-1.0)[0][0] == far


@given(
    st.lists(
        st.tuples(
            st.sampled_from([0.1234565, 0.1234575, 0.5, -0.25, 0.7777771, 0.7777779]),
            st.integers(-3, 3),
            st.integers(0, 30),
        ),
        max_size=40,
    ),
    st.sampled_from([-1.0, 0.0, 0.5]),
)
def test_scored_rows_are_best_first_and_in_id_order_when_equal_to_six_decimals(
    rows: list[tuple[float, int, int]], floor: float
) -> None:
    """``_scored`` orders as its rule says, ``(-round(similarity, 6), id)``, however near the ties: values a
    few last-bit steps apart on either side of a rounding step, copies, repeated ids."""
    values = [np.float32(base) + np.float32(steps) * np.float32(6e-8) for base, steps, _ in rows]
    vector = np.zeros(DIM, dtype=np.float32)
    vector[0] = 1.0
    blobs = []
    for value in values:
        row = np.zeros(DIM, dtype=np.float32)
        row[0] = value
        blobs.append(row.tobytes())
    ids = [f"m{name:02d}" for _, _, name in rows]
    scored = sqlite_vectors._scored(vector, blobs, ids, floor, DIM)
    similarities = [float(v) for v in values]
    expected = sorted(
        ((similarities[at], ids[at], at) for at in range(len(rows)) if similarities[at] >= floor),
        key=lambda hit: (-round(hit[0], 6), hit[1]),
    )
    assert [(memory_id, round(sim, 6)) for sim, memory_id, _ in scored] == [
        (memory_id, round(sim, 6)) for sim, memory_id, _ in expected
    ]
    assert sorted(at for _, _, at in scored) == sorted(at for _, _, at in expected)
