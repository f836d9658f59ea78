"""``zm db copy``: a whole installation moves between SQLite and PostgreSQL without loss."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.harness import Result, run
from tests.store.conftest import sqlite_url
from tests.store.factories import DIM, add_users, at, memory, put, random_unit
from zero_memory import errors
from zero_memory.domain.anchors import AnchorRecord, AnchorState, Origin
from zero_memory.domain.memory import InvalidationReason, Status
from zero_memory.domain.oauth import OAuthClient, OAuthCode, OAuthGrant, OAuthToken, TokenKind
from zero_memory.domain.records import (
    CaptureChunk,
    Channel,
    ChunkStatus,
    Dispute,
    DisputeShape,
    DisputeStatus,
    Judgement,
    Link,
    PortabilityCandidate,
    Project,
    Run,
    RunStatus,
)
from zero_memory.store import SYSTEM, Store, open_store, system_tx
from zero_memory.store.copy import compare_vectors, copy_store
from zero_memory.store.postgres.adapter import PostgresStore
from zero_memory.store.sql import COPY_TABLES

# What a store keeps for itself and a copy leaves alone.
# Derived from other rows (memory_words: the postings of memories.content_tsv, kept by triggers), or bookkeeping.
NOT_COPIED_TABLES = {"schema_migrations", "locks", "counters", "memory_removals", "memory_words", "postings_removed"}
NOT_COPIED_COLUMNS = {("memories", "rev"), ("memories", "content_tsv"), ("memories", "postings_xid")}


def build_corpus(store: Store) -> dict[str, str]:
    """Something in every table: memories in each state, links, the queue, audit, runs, usage."""
    ids: dict[str, str] = {}
    with system_tx(store, "test", write=True) as tx:
        add_users(tx, "alice", "bob")
        tx.add_token("tok_a", "alice", "hash-a", at(1))
        tx.add_token("tok_b", "bob", "hash-b", at(2))
        tx.revoke_tokens("bob", at(3))
        tx.set_provider_key("alice", "openai", "ciphertext==", at(4))
        tx.add_project(Project("proj.alice.api", "alice", "project", "api", "/src/api", "git@x:api.git", at(5)))
        tx.set_membership("proj.alice.api", "bob", "reader", at(6))
        tx.attach_session("alice", "session-1", "proj.alice.api", at(7))
        tx.add_oauth_client(
            OAuthClient("client-1", "Editor", "secret-hash", {"redirect_uris": ["https://e/cb"]}, at(7))
        )
        tx.add_oauth_grant(OAuthGrant("grant_1", "alice", "client-1", ("mcp",), "https://zm/mcp", at(8)))
        tx.add_oauth_code(
            OAuthCode("code-hash", "grant_1", "alice", "client-1", "https://e/cb", True, "c" * 43, at(8), at(9))
        )
        tx.use_oauth_code("code-hash", at(8))
        for kind, token_id in ((TokenKind.ACCESS, "at1"), (TokenKind.REFRESH, "rt1")):
            tx.add_oauth_token(
                OAuthToken(token_id, kind, f"hash-{token_id}", "grant_1", "alice", "client-1", at(8), at(60))
            )
        tx.use_oauth_token("rt1", at(9))
        tx.revoke_oauth_token("at1", at(9))

        live = put(
            tx,
            memory("The API listens on port 8080.", minutes=10, source={"client": "cc", "n": [1, 2]}),
            random_unit(1),
        )
        old = put(tx, memory("Deploys happen on Fridays.", minutes=11), random_unit(2))
        new = put(tx, memory("Deploys happen on Tuesdays — «never» on Fridays.", minutes=12), random_unit(3))
        tx.set_status(old.id, Status.INVALIDATED, InvalidationReason.SUPERSEDED, new.id, at(13))
        forgotten = put(tx, memory("A note to forget.", minutes=14), random_unit(4))
        tx.set_status(forgotten.id, Status.INVALIDATED, InvalidationReason.FORGOTTEN, None, at(15))
        moved = put(tx, memory("Prefer tabs in Makefiles.", minutes=16), random_unit(5))
        tx.set_scope(moved.id, "personal.alice", "proj.alice.api", at(17))
        bobs = put(tx, memory("Bob's own fact.", owner="bob", scope="personal.bob", minutes=18), random_unit(6))
        other_model = put(tx, memory("Embedded by another model.", minutes=19), random_unit(7, dim=8), "old-model")
        ids.update(
            live=live.id,
            old=old.id,
            new=new.id,
            forgotten=forgotten.id,
            moved=moved.id,
            bobs=bobs.id,
            other_model=other_model.id,
        )

        tx.add_link(Link("lnk_1", new.id, old.id, "supersedes", at(12), "alice"))
        tx.add_link(Link("lnk_2", live.id, moved.id, "related", at(20), "hygiene", run_id="run_1"))
        tx.remove_link("lnk_2", at(21))
        tx.add_audit(
            actor="alice",
            action="remember",
            owner="alice",
            memory_ids=[live.id],
            payload={"scope": "proj.alice.api", "text": "ünïcode ✓"},
            run_id=None,
            at=at(10),
        )
        tx.add_audit(
            actor="alice",
            action="supersede",
            owner="alice",
            memory_ids=[new.id, old.id],
            payload={},
            run_id=None,
            at=at(13),
        )

        assert tx.claim_run(Run("run_1", "alice", "scan", RunStatus.RUNNING, False, "cli", at(30), None, {}))
        tx.finish_run("run_1", RunStatus.COMPLETED, {"pairs": 3, "notes": ["ok"]}, at(31))
        tick = Run("run_tick_7", None, "scheduled", RunStatus.RUNNING, True, "scheduler", at(32), None, {})
        assert tx.claim_run(tick)
        tx.add_dispute(
            Dispute(
                "dsp_1",
                "alice",
                DisputeShape.PAIR,
                "contradicts",
                "scan",
                DisputeStatus.PENDING,
                live.id,
                at(33),
                memory_b=moved.id,
                confidence=0.75,
                rationale="differ",
                model="m",
                pair_key="pk_1",
                run_id="run_1",
            )
        )
        tx.add_dispute(
            Dispute(
                "dsp_2",
                "alice",
                DisputeShape.PAIR,
                "duplicate",
                "write",
                DisputeStatus.PENDING,
                new.id,
                at(34),
                memory_b=old.id,
                pair_key="pk_2",
            )
        )
        tx.settle_dispute("dsp_2", DisputeStatus.RESOLVED, {"action": "keep_both"}, "alice", at(35))
        tx.put_judgement("pk_1", Judgement("contradicts", 0.75, "differ", "m"), at(33))
        tx.add_ledger(
            owner="alice",
            model="m",
            purpose="scan",
            input_tokens=120,
            output_tokens=30,
            latency_ms=400,
            outcome="ok",
            run_id="run_1",
            at=at(33),
        )
        tx.add_usage_event(
            user_id="alice", tool="remember", client="cc", outcome="created", declared_supersede=True, at=at(12)
        )
        tx.add_surfacings("alice", [live.id, new.id, live.id], at(40), session_id="s1", channel=Channel.RECALL)
        tx.add_surfacings("alice", [live.id], at(42), session_id=None, channel=Channel.CLI)
        tx.add_surfacings("alice", [new.id], at(43), session_id="s2", channel=Channel.BRIEFING)
        tx.add_pin(live.id, "alice", at(44))
        tx.set_anchors(
            live.id,
            [
                AnchorRecord(
                    live.id,
                    "net/client.py",
                    "retry",
                    Origin.AUTOMATIC,
                    AnchorState.CHANGED,
                    "example.org/a/api",
                    "c" * 40,
                    "sha256:1",
                    at(45),
                    drift=f"{'c' * 40}..{'d' * 40}",
                )
            ],
            at(45),
        )
        # Older traffic, already rolled up into per-day counts (retention).
        tx.add_usage_event(
            user_id="alice", tool="recall", client="cc", outcome="ok", declared_supersede=False, at=at(1)
        )
        tx.add_surfacings("alice", [live.id], at(1), session_id="s0", channel=Channel.RECALL)
        tx.rollup_usage_events(before=at(2))
        tx.rollup_surfacings(before=at(2))
        tx.add_guard(live.id, "m", "kept", at(41))
        tx.add_portability(
            PortabilityCandidate(
                "port_1",
                moved.id,
                "alice",
                "pending",
                "proj.alice.api",
                at(42),
                confidence=0.8,
                rationale="general",
                model="m",
                run_id="run_1",
            )
        )
        staged = CaptureChunk(
            id="chk_1",
            owner="alice",
            chunk_hash="ab" * 32,
            conversation_id="conv-1",
            client="claude-code",
            scope="proj.alice.api",
            transcript="user: ünïcode ✓",
            chars=15,
            status=ChunkStatus.PENDING,
            next_attempt_at=at(43),
            created_at=at(43),
            updated_at=at(43),
        )
        tx.add_chunk(staged)
        tx.update_chunk("chk_1", at(44), attempts=1, last_error="timeout: slow", lease_until=at(45))
        tx.set_capture_budget("bob", 5_000, at(46))
    return ids


def dump(store: Store) -> dict[str, list[dict[str, Any]]]:
    """Every copied row of a store, vectors as lists of floats, so two stores compare with ==."""
    with system_tx(store, "test") as tx:
        tables = {table: tx.copy_rows(table, None, 1_000_000) for table in COPY_TABLES}
    for row in tables["memories"]:
        if row["embedding"] is not None:
            row["embedding"] = [float(x) for x in row["embedding"]]
    return tables


def test_every_table_and_column_of_both_schemas_is_copied(store: Store) -> None:
    """A migration that adds a table or a column must add it to the copy too."""
    with system_tx(store, "test") as tx:
        if store.backend == "sqlite":
            names = [r["name"] for r in tx._query("SELECT name FROM sqlite_master WHERE type = 'table'")]  # type: ignore[attr-defined]
            names = [n for n in names if not n.startswith(("sqlite_", "memories_fts"))]
            columns = {(n, r["name"]) for n in names for r in tx._query(f"PRAGMA table_info({n})")}  # type: ignore[attr-defined]
        else:
            rows = tx._query(  # type: ignore[attr-defined]
                "SELECT table_name AS t, column_name AS c FROM information_schema.columns WHERE table_schema = 'public'"
            )
            names = sorted({r["t"] for r in rows})
            columns = {(r["t"], r["c"]) for r in rows}
    assert set(names) - NOT_COPIED_TABLES == set(COPY_TABLES)
    copied = {(t.name, c) for t in COPY_TABLES.values() for c in t.columns}
    assert {(t, c) for t, c in columns if t not in NOT_COPIED_TABLES} - NOT_COPIED_COLUMNS == copied


def test_a_corpus_round_trips_sqlite_postgres_sqlite_without_loss(
    sqlite_store: Store, pg_store: PostgresStore, tmp_path: Path
) -> None:
    ids = build_corpus(sqlite_store)
    original = dump(sqlite_store)
    assert all(original.values()), [t for t, rows in original.items() if not rows]

    there = copy_store(sqlite_store, pg_store, batch=3)
    assert there.ok, there.to_dict()
    assert there.source == {t: len(rows) for t, rows in original.items()}
    assert there.vectors_checked == len(original["memories"]) and there.min_cosine == pytest.approx(1.0)
    assert dump(pg_store) == original

    back_store = open_store(sqlite_url(tmp_path / "back"), dim=DIM)
    try:
        back = copy_store(pg_store, back_store, batch=2)
        assert back.ok, back.to_dict()
        assert dump(back_store) == original
        # The copy is a working store: full text, vectors and the next seq all follow the copied rows.
        for copied in (pg_store, back_store):
            with system_tx(copied, "test") as tx:
                assert tx.fulltext("Tuesdays", scopes=["proj.alice.api"], limit=5) == [ids["new"]]
                top = tx.similar(random_unit(1), floor=0.99, limit=1, owner="alice")
                assert [n.memory.id for n in top] == [ids["live"]]
                assert tx.get_memory(ids["old"], SYSTEM).superseded_by == ids["new"]  # type: ignore[union-attr]
            with system_tx(copied, "test", write=True) as tx:
                seq = tx.add_audit(actor="x", action="y", owner=None, memory_ids=[], payload={}, run_id=None, at=at(50))
            assert seq == max(r["seq"] for r in original["audit"]) + 1
    finally:
        back_store.close()


def test_a_copy_into_a_database_that_holds_rows_is_refused_and_changes_nothing(
    sqlite_store: Store, pg_store: PostgresStore
) -> None:
    build_corpus(sqlite_store)
    with system_tx(pg_store, "test", write=True) as tx:
        add_users(tx, "carol")
    before = dump(pg_store)
    with pytest.raises(errors.ZMError) as refused:
        copy_store(sqlite_store, pg_store)
    assert str(refused.value).startswith("conflict: the destination database is not empty (users: 1 rows)")
    assert dump(pg_store) == before


def test_vectors_that_differ_after_a_copy_fail_the_check(sqlite_store: Store, tmp_path: Path) -> None:
    build_corpus(sqlite_store)
    destination = open_store(sqlite_url(tmp_path / "dst"), dim=DIM)
    try:
        report = copy_store(sqlite_store, destination)
        assert report.ok
        with system_tx(sqlite_store, "test", write=True) as tx:
            first = tx.copy_rows("memories", None, 1)[0]
            tx.update_embedding(first["id"], -first["embedding"], "test-model")
        checked, lowest = compare_vectors(sqlite_store, destination, [first["id"]])
        assert checked == 1 and lowest == pytest.approx(-1.0)
    finally:
        destination.close()


def zm(tmp_path: Path, *args: str) -> Result:
    env = {"HOME": str(tmp_path), "ZM_HOME": str(tmp_path / "home"), "ZM_EMBEDDING_MODEL": f"hash:{DIM}"}
    return run(args, env=env)


def test_zm_db_copy_moves_a_sqlite_file_into_postgresql_and_refuses_to_do_it_twice(
    sqlite_store: Store, pg_url: str, tmp_path: Path
) -> None:
    build_corpus(sqlite_store)
    original = dump(sqlite_store)
    source = f"sqlite:///{sqlite_store.path}"  # type: ignore[attr-defined]

    done = zm(tmp_path, "db", "copy", source, pg_url, "--json")
    assert done.exit_code == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] and report["mismatched"] == []
    assert report["tables"]["memories"] == {"source": 7, "destination": 7}
    assert report["rows"] == sum(len(rows) for rows in original.values())
    copied = open_store(pg_url, dim=DIM)
    try:
        assert dump(copied) == original
    finally:
        copied.close()

    again = zm(tmp_path, "db", "copy", source, pg_url)
    assert again.exit_code == 1
    assert again.stderr.startswith("conflict: the destination database is not empty")
    assert again.stdout == ""


def test_zm_db_copy_refuses_a_missing_source_file(tmp_path: Path) -> None:
    source, destination = f"sqlite:///{tmp_path / 'nope.db'}", f"sqlite:///{tmp_path / 'b.db'}"
    missing = run(["db", "copy", source, destination], env={"ZM_HOME": str(tmp_path)})
    assert missing.exit_code == 1
    assert missing.stderr.startswith("validation_failed: SRC_URL: no SQLite database at")
    assert not (tmp_path / "b.db").exists()
