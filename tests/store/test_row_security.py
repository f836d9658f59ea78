"""Row-level security on PostgreSQL: a query that forgot its filter sees only its caller's rows.

The store here is opened on the URL the tests hand out, which connects as an
unprivileged role owning its database (tests/pg.py), exactly as
docs/deployment.md tells an operator to run the server. Each test acts for a
user the way the services do (``visibility(tx, uid)``) and then runs raw SQL
through that transaction with the owner and scope filters left out on purpose.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import psycopg
import pytest

from tests.pg import PgServer
from tests.store.factories import add_users, at, axis, memory, put
from tests.store.test_anchors import anchor
from zero_memory import errors
from zero_memory.access.visibility import visibility
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
    pair_key,
)
from zero_memory.ids import new_id
from zero_memory.store import system_tx
from zero_memory.store.ports.search import CandidateMarks
from zero_memory.store.postgres.adapter import PostgresStore

TEAM = "team.alice.platform"


@pytest.fixture
def seeded(pg: PostgresStore) -> dict[str, str]:
    """Alice and bob, each with a row in every table that holds a user's data; one team scope they share."""
    ids: dict[str, str] = {}
    with system_tx(pg, "seed", write=True) as tx:
        add_users(tx, "alice", "bob", "carol")
        tx.add_project(Project(TEAM, "alice", "team", "platform", None, None, at()))
        tx.set_membership(TEAM, "alice", "admin", at())
        tx.set_membership(TEAM, "bob", "writer", at())
        for uid in ("alice", "bob"):
            own = put(tx, memory(f"{uid}'s private note", owner=uid, scope=f"user.{uid}"), axis(0))
            other = put(tx, memory(f"{uid}'s second note", owner=uid, scope=f"user.{uid}"), axis(1))
            shared = put(tx, memory(f"{uid} wrote this for the team", owner=uid, scope=TEAM), axis(2))
            ids[f"{uid}_own"], ids[f"{uid}_shared"] = own.id, shared.id
            tx.add_token(new_id("tok"), uid, "digest", at())
            tx.set_provider_key(uid, "openai", "ciphertext", at())
            tx.attach_session(uid, f"session-{uid}", f"user.{uid}", at())
            tx.add_link(Link(new_id("lnk"), own.id, other.id, "relates", at(), uid))
            tx.add_audit(actor=uid, action="remember", owner=uid, memory_ids=[own.id], payload={}, run_id=None, at=at())
            tx.add_dispute(
                Dispute(
                    id=new_id("dsp"),
                    owner=uid,
                    shape=DisputeShape.PAIR,
                    verdict="contradicts",
                    origin="scan",
                    status=DisputeStatus.PENDING,
                    memory_a=own.id,
                    memory_b=other.id,
                    pair_key=pair_key(own.id, other.id),
                    created_at=at(),
                )
            )
            tx.put_judgement(pair_key(own.id, other.id), Judgement("contradicts", 0.9, "why", "m"), at())
            tx.add_guard(own.id, "m", "complete", at())
            tx.add_pin(own.id, uid, at())
            tx.add_ledger(
                owner=uid,
                model="m",
                purpose="hygiene",
                input_tokens=1,
                output_tokens=1,
                latency_ms=1,
                outcome="ok",
                run_id=None,
                at=at(),
            )
            tx.add_usage_event(user_id=uid, tool="recall", client="c", outcome="ok", declared_supersede=False, at=at())
            tx.add_surfacings(uid, [own.id], at(), session_id=f"session-{uid}", channel=Channel.RECALL)
            tx.add_portability(PortabilityCandidate(new_id("prt"), own.id, uid, "pending", f"user.{uid}", at()))
            tx.add_chunk(
                CaptureChunk(
                    id=new_id("chk"),
                    owner=uid,
                    chunk_hash=uid.ljust(64, "0"),
                    conversation_id="conversation",
                    client="test",
                    scope=f"user.{uid}",
                    transcript="user: hello",
                    chars=11,
                    status=ChunkStatus.PENDING,
                    next_attempt_at=at(),
                    created_at=at(),
                    updated_at=at(),
                )
            )
            tx.set_capture_budget(uid, 1_000, at())
            tx.add_oauth_client(OAuthClient(f"client-{uid}", f"{uid}'s laptop", None, {}, at()))
            grant = OAuthGrant(new_id("grant"), uid, f"client-{uid}", (), "http://127.0.0.1/mcp", at())
            tx.add_oauth_grant(grant)
            redirect = "http://127.0.0.1/cb"
            code = OAuthCode(uid.ljust(64, "c"), grant.id, uid, grant.client_id, redirect, True, "c" * 43, at(), at())
            tx.add_oauth_code(code)
            tx.add_oauth_token(
                OAuthToken(new_id("tok"), TokenKind.ACCESS, "digest", grant.id, uid, grant.client_id, at(), at())
            )
    return ids


# The column that says whose a row is, for every table that holds a user's data.
OWNER_COLUMN = {
    "users": "id",
    "tokens": "user_id",
    "provider_keys": "user_id",
    "sessions": "owner",
    "memberships": "user_id",
    "memories": "owner",
    "disputes": "owner",
    "usage_ledger": "owner",
    "usage_events": "user_id",
    "surfacings": "user_id",
    "portability_candidates": "owner",
    "audit": "owner",
    "capture_chunks": "owner",
    "capture_budgets": "user_id",
    "oauth_grants": "user_id",
    "oauth_codes": "user_id",
    "oauth_tokens": "user_id",
}
# Tables keyed by a memory: their rows follow the memory's visibility.
MEMORY_COLUMN = {"links": "src", "rescan_guards": "memory_id", "audit_memories": "memory_id", "pins": "memory_id"}


def rows(tx: Any, table: str) -> list[dict[str, Any]]:
    """Every row of a table, with no filter at all: the query a careless change would write."""
    return tx._query(f"SELECT * FROM {table}")  # type: ignore[no-any-return]


def test_the_server_role_is_not_a_superuser_and_does_not_bypass_row_security(pg: PostgresStore) -> None:
    with pg.tx() as tx:
        role = rows_of(tx, "SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user")
    assert role == [{"rolsuper": False, "rolbypassrls": False}]


def test_every_table_has_forced_row_security_and_a_policy(pg: PostgresStore) -> None:
    """A new table without policies fails here: add them in its migration, as 0009 does."""
    with pg.tx() as tx:
        tables = rows_of(
            tx,
            "SELECT c.relname, c.relrowsecurity, c.relforcerowsecurity, "
            "(SELECT count(*) FROM pg_policy p WHERE p.polrelid = c.oid) AS policies "
            "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.relname <> 'schema_migrations'",
        )
    assert {t["relname"] for t in tables} >= set(OWNER_COLUMN) | set(MEMORY_COLUMN) | {"judgements", "runs"}
    unprotected = [
        t["relname"] for t in tables if not (t["relrowsecurity"] and t["relforcerowsecurity"] and t["policies"])
    ]
    assert unprotected == []


def test_a_query_without_its_filter_sees_no_other_users_row(pg: PostgresStore, seeded: dict[str, str]) -> None:
    with pg.tx() as tx:
        visibility(tx, "bob")
        for table, column in OWNER_COLUMN.items():
            found = rows(tx, table)
            assert found, table
            foreign = [r for r in found if r[column] not in ("bob", None)]
            if table == "memories":
                # Alice's memory in the team scope bob belongs to is his to read; nothing else of hers.
                assert [r["id"] for r in foreign] == [seeded["alice_shared"]]
            elif table == "audit":
                assert foreign == []
            else:
                assert foreign == [], table
        memory_ids = {r["id"] for r in rows(tx, "memories")}
        for table, column in MEMORY_COLUMN.items():
            assert {r[column] for r in rows(tx, table)} <= memory_ids, table
        assert seeded["alice_own"] not in memory_ids
        for judgement in rows(tx, "judgements"):
            assert set(judgement["pair_key"].split("|")) <= memory_ids
        assert [p["scope"] for p in rows(tx, "projects")] == [TEAM]


def test_postings_kept_from_another_users_search_show_a_caller_nothing_of_hers(
    pg: PostgresStore, seeded: dict[str, str]
) -> None:
    """A process keeps every scope's postings between recalls (store/postgres/postings.py); the rows are
    read under the caller's policy, whatever the scopes asked."""
    with pg.tx() as tx:
        visibility(tx, "alice")
        assert seeded["alice_own"] in tx.fulltext("private second note", scopes=["user.alice"], limit=10)
    with pg.tx() as tx:
        visibility(tx, "alice")
        seq = tx._query("SELECT seq FROM memories WHERE id = ?", (seeded["alice_own"],))[0]["seq"]  # type: ignore[attr-defined]
    assert any(seq in p.seqs for p in pg.postings._words.values())  # hers are kept
    with pg.tx() as tx:
        visibility(tx, "bob")
        words = tx.fulltext("private second note", scopes=["user.alice", "user.bob"], limit=10)
        assert seeded["bob_own"] in words and len(words) == 2 and seeded["alice_own"] not in words


def test_search_and_lookup_by_id_miss_another_users_memory_even_unfiltered(
    pg: PostgresStore, seeded: dict[str, str]
) -> None:
    with pg.tx() as tx:
        visibility(tx, "bob")
        # No scopes, no owner: the store's own unfiltered forms.
        found = {n.memory.id for n in tx.similar(axis(0), floor=-1.0, limit=50)}
        assert seeded["bob_own"] in found and seeded["alice_own"] not in found
        assert tx.get_memory(seeded["alice_own"], visibility(tx, "bob")) is None
        assert tx.memory_vector(seeded["alice_own"]) is None
        words = tx.fulltext("private second note", scopes=["user.alice", "user.bob"], limit=10)
        assert seeded["bob_own"] in words and len(words) == 2  # bob's two notes; alice's two stay hidden
        assert tx.get_token("nonexistent") is None
        assert tx.list_users() == [u for u in tx.list_users() if u.id == "bob"]


def test_a_transaction_that_names_no_caller_sees_nothing(pg: PostgresStore, seeded: dict[str, str]) -> None:
    with pg.tx() as tx:
        for table in [*OWNER_COLUMN, *MEMORY_COLUMN, "judgements", "projects"]:
            assert rows(tx, table) == [], table


def test_registered_oauth_clients_are_read_by_any_caller_and_written_by_the_system_pass_only(
    pg: PostgresStore, seeded: dict[str, str]
) -> None:
    """A client belongs to no user (it registers itself before anyone signs in); any user may be asked to approve it."""
    with pg.tx() as tx:
        assert rows(tx, "oauth_clients") == []
    with pg.tx() as tx:
        visibility(tx, "carol")
        assert {r["id"] for r in rows(tx, "oauth_clients")} == {"client-alice", "client-bob"}
        assert tx.get_oauth_client("client-alice") is not None
    with pytest.raises(psycopg.errors.InsufficientPrivilege), pg.tx(write=True) as tx:
        visibility(tx, "carol")
        tx.add_oauth_client(OAuthClient("client-carol", "planted", None, {}, at()))
    with pg.tx(write=True) as tx:
        visibility(tx, "carol")
        assert tx._exec("DELETE FROM oauth_clients") == 0


def test_a_user_cannot_write_a_row_into_another_users_scope(pg: PostgresStore, seeded: dict[str, str]) -> None:
    with pytest.raises(psycopg.errors.InsufficientPrivilege), pg.tx(write=True) as tx:
        visibility(tx, "carol")
        put(tx, memory("planted in alice's root", owner="carol", scope="user.alice"))
    with system_tx(pg, "check") as tx:
        assert [r for r in rows(tx, "memories") if r["owner"] == "carol"] == []


def test_one_transaction_acts_for_one_user(pg: PostgresStore, seeded: dict[str, str]) -> None:
    with pg.tx() as tx:
        visibility(tx, "bob")
        visibility(tx, "bob")
        with pytest.raises(errors.ZMError, match=r"^internal: one transaction acts for one user"):
            visibility(tx, "alice")
    with system_tx(pg, "hygiene") as tx:
        # A system pass computing an owner's visibility stays the system pass.
        visibility(tx, "alice")
        assert {r["owner"] for r in rows(tx, "memories")} == {"alice", "bob"}


def test_the_caller_does_not_outlive_its_transaction(pg: PostgresStore, seeded: dict[str, str]) -> None:
    with system_tx(pg, "hygiene") as tx:
        assert len(rows(tx, "users")) == 3
    with pg.tx() as tx:
        visibility(tx, "bob")
    with pg.tx() as tx:
        assert rows(tx, "users") == []


def rows_of(tx: Any, sql: str) -> list[dict[str, Any]]:
    return tx._query(sql)  # type: ignore[no-any-return]


def test_the_superuser_still_sees_every_row(pg_server: PgServer, pg_url: str, seeded: dict[str, str]) -> None:
    """What the policies hide is there: an administrator connection (BYPASS) reads both users' rows."""
    with psycopg.connect(pg_server.as_admin(pg_url)) as conn:
        owners = {r[0] for r in conn.execute("SELECT owner FROM memories")}
    assert owners == {"alice", "bob"}


def test_word_statistics_count_every_memory_for_ranking_and_hand_back_the_caller(
    pg: PostgresStore, seeded: dict[str, str]
) -> None:
    """Full-text weights count over every memory, as on SQLite: the store asks them as the system pass
    "statistics" (migration 0021; a user's transaction may not), and the caller's rows stay its own."""
    with pg.tx() as tx:
        visibility(tx, "bob")
        documents, counts = tx._word_counts(["privat", "note"])  # the index's stems of "private" and "note"
        # Bob alone reads one "private" and two "note"s: the counts are alice's and his.
        assert (documents, counts) == (6, {"privat": 2, "note": 4})
        assert seeded["alice_own"] not in {r["id"] for r in rows(tx, "memories")}
        assert rows_of(tx, "SELECT current_setting('zm.system', true) AS s")[0]["s"] in ("", None)
    with system_tx(pg, "hygiene") as tx:
        tx._word_counts(["note"])
        assert rows_of(tx, "SELECT current_setting('zm.system', true) AS s")[0]["s"] == "hygiene"


def test_sessions_served_count_every_user_for_readable_memories_and_hand_back_the_caller(
    pg: PostgresStore, seeded: dict[str, str]
) -> None:
    """Reinforcement counts every member's sessions of a memory the caller reads, as on SQLite; a memory the
    caller cannot read gets no count, and the caller's policies are back in force afterwards."""
    with system_tx(pg, "seed", write=True) as tx:
        tx.add_surfacings("alice", [seeded["bob_shared"]], at(), session_id="alice-1", channel=Channel.RECALL)
        tx.add_surfacings("bob", [seeded["bob_shared"]], at(), session_id="bob-1", channel=Channel.RECALL)
        tx.add_surfacings("bob", [seeded["bob_shared"]], at(), session_id="bob-1", channel=Channel.RECALL)
        tx.add_surfacings("bob", [seeded["bob_shared"]], at(), session_id="bob-2", channel=Channel.CLI)
    asked = [seeded["bob_shared"], seeded["bob_own"], seeded["alice_own"]]
    with pg.tx() as tx:
        visibility(tx, "alice")
        served = tx.sessions_served(asked, since=at() - timedelta(days=1), channel=Channel.RECALL)
        # bob's own note was served to bob (the seed) but alice cannot read it: no count for it.
        assert served == {seeded["bob_shared"]: 2, seeded["alice_own"]: 1}
        assert {r["user_id"] for r in rows(tx, "surfacings")} == {"alice"}
        assert rows_of(tx, "SELECT current_setting('zm.system', true) AS s")[0]["s"] in ("", None)


def test_candidate_marks_read_under_the_callers_policies(pg: PostgresStore, seeded: dict[str, str]) -> None:
    """Asked together in one round trip, the disputes, sessions and anchors are what each read alone shows
    the caller: nothing of a memory only another user may read."""
    with system_tx(pg, "seed", write=True) as tx:
        tx.add_surfacings(
            "bob", [seeded["bob_shared"], seeded["bob_own"]], at(), session_id="b", channel=Channel.RECALL
        )
        for key in ("alice_own", "bob_own", "bob_shared"):
            tx.set_anchors(seeded[key], [anchor(seeded[key], "src/app.py")], at())
    asked = [seeded[key] for key in ("alice_own", "alice_shared", "bob_own", "bob_shared")]
    since = at() - timedelta(days=1)
    with pg.tx() as tx:
        visibility(tx, "alice")
        marks = tx.candidate_marks(asked, since=since, channel=Channel.RECALL)
        assert marks == CandidateMarks(
            tx.open_disputes_for(asked),
            tx.sessions_served(asked, since=since, channel=Channel.RECALL),
            tx.anchors_of(asked),
        )
        assert {d.owner for d in marks.disputes} == {"alice"}
        assert marks.sessions[seeded["bob_shared"]] == 1
        assert seeded["bob_own"] not in marks.sessions
        assert set(marks.anchors) == {seeded["alice_own"], seeded["bob_shared"]}


def test_acting_as_a_member_names_the_caller_and_reads_its_memberships(
    pg: PostgresStore, seeded: dict[str, str]
) -> None:
    """One round trip for both: the memberships are the caller's, and the transaction then acts for it."""
    with system_tx(pg, "hygiene") as tx:
        expected = tx.memberships("bob")
    with pg.tx() as tx:
        assert tx.act_as_member("bob") == expected == tx.memberships("bob")
        assert {r["owner"] for r in rows(tx, "memories")} == {"alice", "bob"}  # bob's own and the team's
        assert seeded["alice_own"] not in {r["id"] for r in rows(tx, "memories")}
        with pytest.raises(errors.ZMError, match=r"^internal: one transaction acts for one user"):
            tx.act_as_member("alice")
    with system_tx(pg, "hygiene") as tx:
        assert tx.act_as_member("carol") == []  # a system pass stays the system pass
        assert {r["owner"] for r in rows(tx, "memories")} == {"alice", "bob"}


# A per-statement value as a policy reads it once (migration 0026): an InitPlan, as PostgreSQL prints it.
ONCE = re.compile(r"\( SELECT (zm_system|zm_caller|zm_readable_scopes|zm_writable_scopes)\(\) AS \1\)")
PER_STATEMENT = re.compile(r"\bzm_(system|caller|readable_scopes|writable_scopes)\(\)")


def policies(tx: Any) -> dict[str, dict[str, Any]]:
    """Every policy by table and name: its command, kind, roles and expressions as PostgreSQL prints them."""
    found = rows_of(
        tx,
        "SELECT tablename || '.' || policyname AS name, cmd, permissive, roles::text AS roles, qual, with_check "
        "FROM pg_policies WHERE schemaname = 'public'",
    )
    return {p.pop("name"): p for p in found}


def read_per_row(expression: str | None) -> list[str]:
    """The per-statement values an expression calls outside a sub-select: evaluated again for every row."""
    return [m.group(0) for m in PER_STATEMENT.finditer(ONCE.sub("", expression or ""))]


def test_every_policy_reads_the_caller_once_a_statement(pg: PostgresStore) -> None:
    """zm_system() and zm_caller() inlined into a policy call current_setting() for each row a statement reads
    (recall's postings: thousands); a sub-select is evaluated once. A new policy written with them bare fails here."""
    with system_tx(pg, "check") as tx:
        found = policies(tx)
    assert len(found) >= 50
    assert {name: read_per_row(p["qual"]) + read_per_row(p["with_check"]) for name, p in found.items()} == {
        name: [] for name in found
    }
    assert ONCE.search(found["memory_words.memory_words_caller"]["qual"])
