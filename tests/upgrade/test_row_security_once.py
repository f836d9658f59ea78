"""Migration 0026 on a PostgreSQL database written at 0025 (tests/upgrade/fixtures): every policy then reads the
caller once a statement, means what it meant, and each caller reads the rows it read before."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row

from tests.pg import PgServer
from tests.store.test_row_security import ONCE, policies, read_per_row, rows
from tests.upgrade.test_upgrade import FIXTURES, load_postgres_fixture
from zero_memory.access.visibility import visibility
from zero_memory.store import system_tx
from zero_memory.store.postgres.adapter import PostgresStore

FIXTURE = FIXTURES / "schema-0025.postgres.sql.gz"
# Policies a later migration gives a new meaning (0028: what a user's transaction appends to the audit log,
# and the runs she started over a teammate's memories, with their rows, tests/store/test_row_security_audit.py);
# their commands, kinds and roles are still compared.
CHANGED_LATER = {"audit.audit_append", "audit_memories.audit_memories_append", "runs.runs_caller", "audit.audit_read"}
# Policies of tables a later migration adds (0029: the last removal's transaction, no one's data).
ADDED_LATER = {"postings_removed.postings_removed_read", "postings_removed.postings_removed_stamped"}
TABLES = ("users", "memberships", "projects", "memories", "memory_words", "audit", "audit_memories", "disputes")


@dataclass(frozen=True)
class At0025:
    url: str  # as the servers' role: the policies bind it
    admin: str  # past row-level security

    def policies(self) -> dict[str, dict[str, Any]]:
        with psycopg.connect(self.admin, row_factory=dict_row) as conn:
            return policies(_Tx(conn))

    def count(self, table: str, where: str = "true") -> int:
        with psycopg.connect(self.admin) as conn:
            row = conn.execute(f"SELECT count(*) FROM {table} WHERE {where}").fetchone()
        assert row is not None
        return int(row[0])


class _Tx:
    """A connection read the way the row-security tests read a transaction."""

    def __init__(self, conn: psycopg.Connection[dict[str, Any]]) -> None:
        self.conn = conn

    def _query(self, sql: str) -> list[dict[str, Any]]:
        return self.conn.execute(sql).fetchall()


@pytest.fixture
def at_0025(pg_server: PgServer) -> Iterator[At0025]:
    url = load_postgres_fixture(FIXTURE, pg_server.fresh_url())
    yield At0025(url, pg_server.as_admin(url))
    pg_server.drop(url)


@pytest.fixture
def migrated(at_0025: At0025) -> Iterator[PostgresStore]:
    store = PostgresStore.open(at_0025.url, dim=512)
    yield store
    store.close()


def test_the_fixture_is_at_0025_with_policies_that_read_the_caller_every_row(at_0025: At0025) -> None:
    found = at_0025.policies()
    assert at_0025.count("schema_migrations", "version = 25") == 1
    assert at_0025.count("schema_migrations", "version = 26") == 0
    assert read_per_row(found["memory_words.memory_words_caller"]["qual"]) == ["zm_system()"]


def test_every_policy_reads_the_caller_once_and_means_what_it_meant(at_0025: At0025) -> None:
    """Each policy's expressions with their sub-selects unwrapped are 0025's (where 0015 and 0021 read the scopes
    once already), word for word; its command, kind and roles are unchanged."""
    before = at_0025.policies()
    PostgresStore.open(at_0025.url, dim=512).close()
    assert at_0025.count("schema_migrations", "version = 26") == 1
    after = at_0025.policies()
    assert after.keys() - ADDED_LATER == before.keys()
    for name, policy in after.items():
        assert read_per_row(policy["qual"]) + read_per_row(policy["with_check"]) == [], name
        if name in ADDED_LATER:
            continue
        if name in CHANGED_LATER:
            assert {**policy, "qual": None, "with_check": None} == {**before[name], "qual": None, "with_check": None}, (
                name
            )
        else:
            assert unwrapped(policy) == unwrapped(before[name]), name


def test_after_it_a_caller_reads_its_own_rows_and_a_system_pass_reads_all(
    at_0025: At0025, migrated: PostgresStore
) -> None:
    with migrated.tx() as tx:
        readable = visibility(tx, "bob").readable
        memories = rows(tx, "memories")
        words = rows(tx, "memory_words")
        audit = rows(tx, "audit")
    scopes = ", ".join(f"'{s}'" for s in sorted(readable))
    # Every row of bob's scopes, and none of another's.
    assert sorted(m["id"] for m in memories) == sorted(
        r["id"] for r in _admin_rows(at_0025, f"SELECT id FROM memories WHERE scope IN ({scopes})")
    )
    assert {m["owner"] for m in memories} == {"alice", "bob"}  # alice's team memory, read as a member
    assert {m["scope"] for m in memories} <= readable
    assert at_0025.count("memories", f"scope NOT IN ({scopes})") > 0
    assert len(words) == at_0025.count("memory_words", f"scope IN ({scopes})")
    # The audit rows about bob's account or by him, and those about a memory he reads.
    about_his = (
        "SELECT seq FROM audit a WHERE a.owner = 'bob' OR a.actor = 'bob' OR EXISTS (SELECT 1 FROM audit_memories am "
        f"JOIN memories m ON m.id = am.memory_id WHERE am.audit_seq = a.seq AND m.scope IN ({scopes}))"
    )
    assert sorted(a["seq"] for a in audit) == sorted(r["seq"] for r in _admin_rows(at_0025, about_his))
    assert 0 < len(audit) < at_0025.count("audit")
    with system_tx(migrated, "check") as tx:
        for table in TABLES:
            assert len(rows(tx, table)) == at_0025.count(table), table


def unwrapped(policy: dict[str, Any]) -> dict[str, Any]:
    """A policy with each per-statement value called in place, as 0009 wrote them."""
    return {k: ONCE.sub(r"\1()", v) if isinstance(v, str) else v for k, v in policy.items()}


def _admin_rows(at: At0025, sql: str) -> list[dict[str, Any]]:
    with psycopg.connect(at.admin, row_factory=dict_row) as conn:
        return conn.execute(sql).fetchall()
