"""The sweep's candidates through each store's index: the same pairs an exact scan gives, filters exact.

A seeded corpus of clustered vectors (three owners, every scope, a share of
invalidated rows) is swept whole, as a full hygiene cycle does, by
``hygiene.candidates.pairs``: through the SQLite clusters (forced on at any
size), SQLite's exact scan, PostgreSQL's HNSW index (forced on) and its exact
search. Every pair must be two live memories of one owner, at their true
similarity, above the floor; the pairs must be the exact scan's pairs (the
approximate indexes may miss at most 2 %).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest

from tests.store.conftest import sqlite_url
from tests.store.factories import DIM, AsSystem, add_users, memory, put
from zero_memory.domain.memory import InvalidationReason, Status
from zero_memory.domain.records import pair_key
from zero_memory.hygiene.candidates import pairs
from zero_memory.store import Store
from zero_memory.store.sqlite.adapter import SQLiteStore
from zero_memory.store.sqlite.clusters import Clusters

OWNERS = ["alice", "bob", "carol"]
SCOPES = {"alice": ["proj.alice.api", "user.alice"], "bob": ["proj.bob.web", "user.bob"], "carol": ["user.carol"]}
FLOOR = 0.8
LIMIT = 3
ROWS = 600
CLUSTERS = 40


STORES = ["sqlite-clusters", "sqlite-clusters-scan", "sqlite-exact", "postgres-hnsw", "postgres-exact"]


@pytest.fixture(params=STORES)
def swept(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    store, opened = open_store(request, tmp_path)
    fill(store)
    yield store
    opened.close()


@pytest.fixture(params=STORES)
def empty(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    store, opened = open_store(request, tmp_path)
    yield store
    opened.close()


def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Store, Any]:
    """The store a parameter names: SQLite's clusters (searched, or scanned whole for a filter keeping few
    rows), SQLite's exact scan, PostgreSQL's HNSW index or its exact search."""
    if request.param.startswith("postgres"):
        from zero_memory.store.postgres.adapter import PostgresStore

        server = request.getfixturevalue("pg_server")
        url = server.fresh_url()
        bound = 0 if request.param == "postgres-hnsw" else 100_000
        opened: Any = PostgresStore.open(url, dim=DIM, exact_search_rows=bound)
        request.addfinalizer(lambda: server.drop(url))
    else:
        options = {
            "sqlite-clusters": {"ann_min_rows": 0, "exact_filter_rows": 0},
            "sqlite-clusters-scan": {"ann_min_rows": 0},
            "sqlite-exact": {},
        }[request.param]
        opened = SQLiteStore.open(sqlite_url(tmp_path), dim=DIM, **options)
    return cast(Store, AsSystem(opened)), opened


def fill(store: Store) -> None:
    rng = np.random.default_rng(14)
    centres = rng.standard_normal((CLUSTERS, DIM)).astype(np.float32)
    with store.tx(write=True) as tx:
        add_users(tx, *OWNERS)
        for n in range(ROWS):
            vector = centres[int(rng.integers(CLUSTERS))] + 0.35 * rng.standard_normal(DIM).astype(np.float32)
            owner = OWNERS[int(rng.integers(len(OWNERS)))]
            scope = SCOPES[owner][int(rng.integers(len(SCOPES[owner])))]
            gone = rng.random() < 0.2
            m = memory(
                f"row {n}",
                owner=owner,
                scope=scope,
                minutes=n,
                status=Status.INVALIDATED if gone else Status.LIVE,
                reason=InvalidationReason.FORGOTTEN if gone else None,
            )
            put(tx, m, (vector / np.linalg.norm(vector)).astype(np.float32))


def exact_pairs(store: Store) -> dict[str, float]:
    """Each live row's ``LIMIT`` nearest live rows of its owner above the floor, by brute force."""
    with store.tx() as tx:
        rows = [r for r in tx.copy_rows("memories", None, 10_000) if r["status"] == "live"]
    vectors = {r["id"]: np.asarray(r["embedding"], dtype=np.float32) for r in rows}
    found: dict[str, float] = {}
    for subject in rows:
        near = [
            (float(vectors[subject["id"]] @ vectors[r["id"]]), r["id"])
            for r in rows
            if r["owner"] == subject["owner"] and r["id"] != subject["id"]
        ]
        near = sorted((hit for hit in near if hit[0] >= FLOOR), key=lambda hit: (-round(hit[0], 6), hit[1]))
        for similarity, other in near[:LIMIT]:
            found[pair_key(subject["id"], other)] = similarity
    return found


def test_the_sweep_finds_the_exact_scans_pairs_and_only_pairs_of_live_memories_of_one_owner(swept: Store) -> None:
    truth = exact_pairs(swept)
    with swept.tx() as tx:
        subjects = [m for owner in OWNERS for m in tx.live_memories(owner=owner, limit=10_000)]
        found = list(pairs(tx, subjects, floor=FLOOR, limit=LIMIT))
        rows = {r["id"]: r for r in tx.copy_rows("memories", None, 10_000)}
    assert len(truth) > 300  # the corpus has many close pairs, across scopes
    for candidate in found:
        a, b = rows[candidate.a.id], rows[candidate.b.id]
        assert a["status"] == b["status"] == "live"
        assert a["owner"] == b["owner"]
        true = float(np.asarray(a["embedding"], dtype=np.float32) @ np.asarray(b["embedding"], dtype=np.float32))
        assert candidate.similarity == pytest.approx(true, abs=1e-4)
        assert candidate.similarity >= FLOOR
    keys = {c.key for c in found}
    assert len(keys) == len(found)
    assert len(keys & truth.keys()) >= 0.98 * len(truth)
    # Beyond the exact pairs, a subject's neighbour may only be one the index ranked among its nearest
    # in place of one it missed: no more pairs than the exact ones, give or take those misses.
    assert len(keys - truth.keys()) <= len(truth.keys() - keys)


def test_neighbours_tied_at_the_cut_are_taken_in_id_order(empty: Store) -> None:
    """Six copies of one vector tie for a subject's three places: whatever order the index found them in,
    the sweep takes the three with the smallest ids, as the exact scan does."""
    rng = np.random.default_rng(3)
    shared = rng.standard_normal(DIM).astype(np.float32)
    shared /= np.linalg.norm(shared)
    with empty.tx(write=True) as tx:
        add_users(tx, "alice")
        for n in range(40):
            other = rng.standard_normal(DIM).astype(np.float32)
            put(tx, memory(f"other {n}", minutes=n), (other / np.linalg.norm(other)).astype(np.float32))
        copies = [memory(f"copy {n}", minutes=100 + n) for n in range(6)]
        for copy in copies:
            put(tx, copy, shared)
        subject = memory("subject", minutes=200)
        near = shared + 0.3 * rng.standard_normal(DIM).astype(np.float32)
        put(tx, subject, (near / np.linalg.norm(near)).astype(np.float32))
    with empty.tx() as tx:
        found = list(pairs(tx, [subject], floor=0.5, limit=3))
    assert sorted(c.a.id for c in found) == sorted(c.id for c in copies)[:3]
    assert all(c.b.id == subject.id for c in found)


def test_a_search_that_misses_its_own_subject_searches_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A search of the clusters can go astray (an approximate index): one that did not even return its
    subject's own row is repeated over more clusters, so the subject still gets its true neighbours."""
    opened = SQLiteStore.open(sqlite_url(tmp_path), dim=DIM, ann_min_rows=0, exact_filter_rows=0)
    store = cast(Store, AsSystem(opened))
    fill(store)
    truth = exact_pairs(store)
    search = Clusters.search
    walks: list[tuple[int, int]] = []

    def first_walk_astray(clusters: Clusters, vectors: np.ndarray, count: int, **options: Any) -> Any:
        """The first search scans the opposite part of the clusters: each vector's farthest rows."""
        walks.append((count, options["probes"]))
        if len(walks) == 1:
            vectors = -vectors
        return search(clusters, vectors, count, **options)

    monkeypatch.setattr(Clusters, "search", first_walk_astray)
    with store.tx() as tx:
        subjects = tx.live_memories(owner="alice", limit=10_000)
        found = {c.key for c in pairs(tx, subjects, floor=FLOOR, limit=LIMIT)}
    opened.close()
    assert len(walks) >= 2 and walks[1][0] > walks[0][0] and walks[1][1] >= walks[0][1]
    theirs = {s.id for s in subjects}
    alice = {key for key in truth if key.split("|")[0] in theirs}
    assert len(alice) > 50
    assert len(found & alice) >= 0.98 * len(alice)


def test_postgres_searches_a_batch_on_two_connections_with_the_same_answers(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read transaction's batch is split with a second connection that takes up its snapshot: the
    pairs are those one connection finds."""
    from zero_memory.store.postgres import vectors

    request.param = "postgres-hnsw"
    store, opened = open_store(request, tmp_path)
    fill(store)

    def swept(split_min: int) -> list[tuple[str, str, float]]:
        monkeypatch.setattr(vectors, "SPLIT_MIN_SUBJECTS", split_min)
        with store.tx() as tx:
            subjects = [m for owner in OWNERS for m in tx.live_memories(owner=owner, limit=10_000)]
            return [(c.a.id, c.b.id, c.similarity) for c in pairs(tx, subjects, floor=FLOOR, limit=LIMIT)]

    split = swept(1)
    assert split and split == swept(10**9)
    opened.close()
