"""The SQLite store's vector index: snapshots, other processes, kills, filters."""

from __future__ import annotations

import json
import random
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Collection, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest

from tests.store.conftest import sqlite_url
from tests.store.factories import DIM, AsSystem, add_users, at, brief_of, memory, put, random_unit
from tests.store.processes import writer
from tests.store.writer import found_by_index, vector_for
from zero_memory.domain.memory import InvalidationReason, Kind, Status
from zero_memory.store import Store
from zero_memory.store import graph as graph_module
from zero_memory.store import vector_index as vector_index_module
from zero_memory.store.graph import Graph
from zero_memory.store.index_files import IndexFiles
from zero_memory.store.sqlite import SQLiteStore
from zero_memory.store.vector_index import Filter, Row, State, VectorIndex

GRAPH = {"ann_min_rows": 0, "exact_filter_rows": 0}
OWNERS = ["alice", "bob", "carol"]
SCOPES = ["proj.alice.api", "user.alice", "proj.bob.web", "user.bob", "user.carol"]


def open_graph(folder: Path) -> SQLiteStore:
    return SQLiteStore.open(sqlite_url(folder), dim=DIM, **GRAPH)


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
def graph_store(tmp_path: Path) -> Iterator[SQLiteStore]:
    store = open_graph(tmp_path)
    yield store
    store.close()


@pytest.fixture(params=["graph", "graph-scan", "exact", "postgres"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """Every way a search is answered: the SQLite graph, the graph scanning filtered rows, the exact scan,
    and PostgreSQL."""
    if request.param == "postgres":
        yield _postgres(request)
        return
    options = {
        "graph": GRAPH,
        "graph-scan": {"ann_min_rows": 0, "exact_filter_rows": 3_000},
        "exact": {},
    }[request.param]
    store = SQLiteStore.open(sqlite_url(tmp_path), dim=DIM, **options)
    yield store
    store.close()


def _postgres(request: pytest.FixtureRequest) -> Store:
    from zero_memory.store.postgres import PostgresStore

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


@pytest.mark.parametrize(
    "flt", [{}, {"scopes": ["proj.alice.api", "user.carol"]}, {"scopes": SCOPES, "kinds": [Kind.TASK]}]
)
def test_a_search_proposed_from_another_thread_finds_what_similar_finds(any_store: Store, flt: dict[str, Any]) -> None:
    """Recall walks the graph on another thread while its transaction reads: the rows are still read,
    filtered and scored in the transaction, its own writes included."""
    fill(any_store, 300)
    query = random_unit(7)
    with any_store.tx(write=True) as tx:
        put(tx, memory("written in this transaction", owner="alice", scope="user.carol", kind=Kind.TASK), query)
        search = tx.vector_search(floor=-1.0, limit=40, **flt)
        with ThreadPoolExecutor(max_workers=1) as pool:
            pool.submit(search.propose, query).result()
        found = [(n.brief, round(n.similarity, 6)) for n in search.neighbours()]
        near = tx.similar(query, floor=-1.0, limit=40, **flt)
        expected = [(brief_of(n.memory), round(n.similarity, 6)) for n in near]
    assert found == expected
    assert len(found) == 40


def test_a_search_for_a_few_rows_returns_the_exact_nearest_ones(graph_store: SQLiteStore) -> None:
    """Only the first of the graph's hits in its own (int8) order are read and scored: the margin
    they keep holds the exact nearest ones, whose order and similarities are exact."""
    fill(graph_store, 400)
    with graph_store.tx() as tx:
        rows = [r for r in tx.copy_rows("memories", None, 1_000) if r["status"] == "live"]
    for seed in range(30):
        query = random_unit(1_000 + seed)
        exact = exact_order(rows, query)[:5]
        with graph_store.tx() as tx:
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


def test_candidate_rows_are_read_by_seq_whatever_the_filter(graph_store: SQLiteStore) -> None:
    """A long list of candidates with an owner filter once made SQLite walk the owner's index whole for
    each chunk of candidates instead of looking the rows up: every read of candidates is by row number."""
    fill(graph_store, 600)
    queries = np.stack([random_unit(seed) for seed in range(40)])
    with graph_store.tx() as tx:
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
    store = open_graph(tmp_path)
    fill(store, 200)
    assert found_by_index(store, live_contents(store)[:5]) == 5
    assert store.save_index()
    store.close()
    with closing(open_graph(tmp_path)) as other_writer:  # another process's writes after the snapshot
        later = fill(other_writer, 50, seed=1)
    store = open_graph(tmp_path)
    try:
        live = live_contents(store)
        assert found_by_index(store, live) == len(live)
        assert store.index.restored_from is not None
        assert set(later) & set(live)
    finally:
        store.close()


def test_a_snapshot_linked_with_another_connectivity_is_rebuilt_with_the_current_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A snapshot saved before the graph's density changed keeps its own recall, and rows added to it
    would keep its density: the index is built again from the database, and saved anew."""
    store = open_graph(tmp_path)
    fill(store, 150)
    found_by_index(store, ["warm"])
    assert store.save_index()
    store.close()
    monkeypatch.setattr(graph_module, "CONNECTIVITY", graph_module.CONNECTIVITY + 8)
    store = open_graph(tmp_path)
    try:
        live = live_contents(store)
        assert found_by_index(store, live) == len(live)
        assert store.index.restored_from is None
        assert store.save_index()
    finally:
        store.close()
    (snapshot,) = IndexFiles(tmp_path / "zm.db").snapshots()
    assert Graph.restore(snapshot.path, DIM).connectivity == graph_module.CONNECTIVITY


def test_a_snapshot_records_how_its_graph_was_linked_and_a_restart_searches_it_with_that_walk(
    tmp_path: Path,
) -> None:
    store = open_graph(tmp_path)
    fill(store, 150)
    found_by_index(store, ["warm"])
    assert store.save_index()
    store.close()
    (snapshot,) = IndexFiles(tmp_path / "zm.db").snapshots()
    assert snapshot.linked_with == graph_module.EXPANSION_ADD
    store = open_graph(tmp_path)
    try:
        live = live_contents(store)
        assert found_by_index(store, live) == len(live)
        assert store.index.restored_from == snapshot.name
        assert store.index._graph is not None
        assert store.index._graph.walk == graph_module.walk_for(graph_module.EXPANSION_ADD)
    finally:
        store.close()


def test_a_snapshot_that_does_not_say_how_it_was_linked_is_used_and_searched_with_the_walk_of_1024(
    tmp_path: Path,
) -> None:
    """Snapshots written before the linking was recorded were linked with an expansion of 256: the graph is
    as good as it was and is searched as it was, not built again; its weaker linking stays recorded."""
    store = open_graph(tmp_path)
    fill(store, 150)
    found_by_index(store, ["warm"])
    assert store.save_index()
    store.close()
    (snapshot,) = IndexFiles(tmp_path / "zm.db").snapshots()
    unrecorded = snapshot.path.with_name(re.sub(r"-linked\d+", "", snapshot.name))
    snapshot.path.rename(unrecorded)
    store = open_graph(tmp_path)
    try:
        fill(store, 20, seed=1)
        live = live_contents(store)
        assert found_by_index(store, live) == len(live)
        assert store.index.restored_from == unrecorded.name
        assert store.index._graph is not None
        assert (store.index._graph.linked_with, store.index._graph.walk) == (256, 1024)
        assert store.save_index()
    finally:
        store.close()
    assert IndexFiles(tmp_path / "zm.db").snapshots()[0].linked_with == 256


def test_the_walk_widens_as_the_graph_grows_past_the_size_it_was_measured_at() -> None:
    """A walk that finds 0.98 of the top ten at 100k rows finds less in a larger graph of the same corpus:
    the walk for a graph's linking is widened with its rows, never narrowed."""
    first, _ = graph_module.GROWTH[0]
    largest, widest = graph_module.GROWTH[-1]
    for linking, walk in graph_module.WALKS.items():
        assert graph_module.walk_for(linking, 0) == graph_module.walk_for(linking, first) == walk
        walks = [graph_module.walk_for(linking, rows) for rows in range(first, 10 * largest, first // 10)]
        assert walks == sorted(walks) and walks[-1] > walk
    assert graph_module.walk_for(graph_module.EXPANSION_ADD, largest) == widest


def test_a_graph_is_searched_with_the_walk_for_the_rows_it_holds_now(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(graph_module, "GROWTH", ((20, 64), (40, 128)))
    monkeypatch.setattr(graph_module, "WALKS", {256: 128, 512: 64})
    graph = Graph(DIM)
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((60, DIM)).astype(np.float32)
    for rows, walk in ((20, 64), (30, 96), (40, 128), (60, 128)):
        graph.add(np.arange(len(graph), rows), vectors[len(graph) : rows])
        keys, _ = graph.search(vectors[:1], 5)
        assert graph.walk == walk
        assert graph._index.expansion_search == walk
        assert keys[0][0] == 0
    restored = Graph(DIM, graph._index, linked_with=256)
    assert restored.walk == 256  # linked with 256: its own walk, widened in the same proportion


def test_a_snapshot_of_another_history_of_the_database_is_not_used(tmp_path: Path) -> None:
    """A database restored from a backup, then written again: the newer snapshot describes other rows."""
    store = open_graph(tmp_path)
    fill(store, 100)
    store.close()
    backup = tmp_path / "backup.db"
    shutil.copy(tmp_path / "zm.db", backup)
    store = open_graph(tmp_path)
    fill(store, 100, seed=1)
    found_by_index(store, ["warm"])
    assert store.save_index()
    store.close()
    (tmp_path / "zm.db").unlink()
    shutil.copy(backup, tmp_path / "zm.db")
    store = open_graph(tmp_path)
    later = fill(store, 120, seed=2)  # as many changes as the lost ones, and more
    store.close()
    store = open_graph(tmp_path)
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
    store = open_graph(tmp_path)
    fill(store, 150)
    found_by_index(store, ["warm"])
    assert store.save_index()
    store.close()
    (snapshot,) = IndexFiles(tmp_path / "zm.db").snapshots()
    data = snapshot.path.read_bytes()
    snapshot.path.write_bytes(
        {"truncated": data[: len(data) // 2], "garbage": b"\x07" * len(data), "empty": b""}[damage]
    )
    store = open_graph(tmp_path)
    try:
        live = live_contents(store)
        assert found_by_index(store, live) == len(live)
        assert store.index.restored_from is None
    finally:
        store.close()


def test_a_rolled_back_write_leaves_nothing_in_the_index(graph_store: SQLiteStore) -> None:
    fill(graph_store, 50)
    live_before = live_contents(graph_store)
    with pytest.raises(RuntimeError), graph_store.tx(write=True) as tx:
        put(tx, memory("ghost"), vector_for("ghost"))
        first = next(r["id"] for r in tx.copy_rows("memories", None, 100) if r["content"] == live_before[0])
        tx.set_status(first, Status.INVALIDATED, InvalidationReason.FORGOTTEN, None, at())
        assert found_by_index(graph_store, ["ghost"]) == 1  # this transaction sees its own rows
        assert found_by_index(graph_store, live_before[:1]) == 0
        raise RuntimeError("fails after searching")
    # The next write reuses the rolled-back counter values and row number.
    with graph_store.tx(write=True) as tx:
        put(tx, memory("real"), vector_for("real"))
    assert found_by_index(graph_store, ["ghost"]) == 0
    live = live_contents(graph_store)
    assert live == [*live_before, "real"]
    assert found_by_index(graph_store, live) == len(live)


def test_two_processes_writing_one_database_see_each_others_writes_through_the_index(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path)
    with closing(open_graph(tmp_path)) as store:
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
    with closing(open_graph(tmp_path)) as store:
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
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        proc.stdout.close()
        store = open_graph(tmp_path)
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


def graph_keys(folder: Path) -> set[int]:
    """The keys of every snapshot saved beside the database."""
    found: set[int] = set()
    for snapshot in IndexFiles(folder / "zm.db").snapshots():
        found.update(int(k) for k in Graph.restore(snapshot.path, DIM).keys())  # noqa: SIM118 (not a dict)
    return found


def seqs_of(store: Store, owner: str) -> set[int]:
    with store.tx() as tx:
        return {r["seq"] for r in tx._query("SELECT seq FROM memories WHERE owner = ?", (owner,))}  # type: ignore[attr-defined]


def test_an_account_deletion_leaves_no_vector_of_the_user_in_any_process_or_snapshot(tmp_path: Path) -> None:
    """The deleting process rewrites the snapshot; another process that had the vectors (a running server)
    drops them at its next refresh, and no snapshot it saves afterwards holds them."""
    deleting = cast(Store, AsSystem(open_graph(tmp_path)))
    fill(deleting, 300)
    server = open_graph(tmp_path)
    with closing(server):
        probe = vector_for("memory 0-7")
        for store in (server, deleting):
            with store.tx() as tx:
                assert tx.similar(probe, floor=-1.0, limit=300)  # each process's graph holds every vector
        assert deleting.save_index()  # type: ignore[attr-defined]
        alice = seqs_of(deleting, "alice")
        assert alice and alice <= graph_keys(tmp_path)

        with deleting.tx(write=True) as tx:
            counts = tx.erase_user("alice", "former-0", at(0))
        deleting.purge_removed()

        assert counts["memories"] == len(alice)
        assert not alice & graph_keys(tmp_path)
        assert server.save_index(at_least=1)  # the server catches up before it saves
        assert not alice & graph_keys(tmp_path)
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
        self.seen: list[tuple[int, bool]] = []

    def changed_rows(self, after_rev: int, limit: int) -> list[Row]:
        self.seen.append((self.index.indexed, self.index.uses_graph))
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


def test_catching_up_a_large_database_builds_the_graph_once_past_the_bound_not_after_every_page(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The exact scan's matrix holds at most a page beyond ``ann_min_rows``: a million rows never pass
    through it (2 GB of float32), they go into the graph page by page."""
    monkeypatch.setattr(vector_index_module, "PAGE", 50)
    index = VectorIndex(DIM, ann_min_rows=120, exact_filter_rows=0)
    source = _Rows(index, 600)

    index.refresh(source)

    assert index.uses_graph and index.indexed == 600
    assert all(uses_graph for indexed, uses_graph in source.seen if indexed >= 120)
    assert max(indexed for indexed, uses_graph in source.seen if not uses_graph) < 120 + 50
    probe = np.frombuffer(cast(bytes, source.rows[417][5]), dtype=np.float32)
    hits = index.candidates(probe, Filter.of(None, "alice"), want=5, floor=-1.0)
    assert hits[0][0] == 418


def test_a_row_added_then_removed_within_one_page_leaves_no_vector_in_the_graph() -> None:
    """A memory written, then removed with its account, both after the index last looked: the page holds
    its vector and then its removal, and the graph (which snapshots are saved from) must not keep it."""
    index = VectorIndex(DIM, ann_min_rows=0, exact_filter_rows=0)
    source = _Rows(index, 10)
    index.refresh(source)
    assert index.uses_graph
    source.rows += [
        (11, "alice", "user.alice", "fact", True, random_unit(11).tobytes(), 11),
        (11, "", "", "", False, None, 12),
    ]
    index.refresh(source)
    assert index._graph is not None
    assert not index._graph.contains(np.array([11]))[0]
    assert not index._has[11]
