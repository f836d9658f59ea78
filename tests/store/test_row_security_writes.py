"""Row-level security on PostgreSQL: a user's transaction cannot widen what it may read.

docs/deployment.md (Row-level security) lists what the policies guarantee for
writes; each test below is one of those guarantees, tried as alice against bob
through a transaction that acts for alice the way the services do
(``visibility(tx, "alice")``), as the unprivileged role the servers run as
(tests/pg.py). The writes are the application's own (``tx.set_membership``,
``tx.add_project``, ...) or raw SQL, since a policy must hold whatever SQL the
transaction sends. Each refused write ends the transaction; a fresh one then
shows that bob's memories stay out of alice's reach.

The guarantees (numbered as in docs/deployment.md) and their tests:

2. Membership is decided by a scope's owner or admin:
   ``test_a_user_cannot_add_herself_to_a_scope_she_does_not_manage``,
   ``test_a_user_cannot_raise_her_own_role``,
   ``test_a_user_cannot_move_her_membership_to_another_scope``.
3. A project is created only in its creator's namespace, and only its owner
   changes it: ``test_a_user_cannot_make_a_project_of_another_users_personal_scope``,
   ``test_a_user_creates_projects_only_in_her_own_namespace``,
   ``test_a_user_cannot_take_over_a_project_she_is_a_member_of``,
   ``test_a_user_cannot_rename_her_own_project_into_another_users_scope``.
4. A memory is added only where the user may write, a captured chunk staged
   only for such a scope: ``test_a_user_adds_memories_only_where_she_may_write``,
   ``test_a_user_stages_captured_chunks_only_for_a_scope_she_may_write``.
5. OAuth codes and tokens only under her own grants:
   ``test_a_user_cannot_issue_a_code_or_token_under_another_users_grant``.
6. What she adds about memories names only memories she can read:
   ``test_what_hangs_off_memories_names_only_memories_she_can_see``.
7. Counts of other users' text are not hers to ask:
   ``test_word_counts_answer_only_a_system_pass``.

Guarantees 1 and 8 (what she reads; a transaction that named no one) are
tests/store/test_row_security.py's. The last test here shows the application's
own writes (creating a project, ``zm project grant``'s system pass, full-text
recall) still work as the application role.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest

from tests.store.factories import add_users, at, axis, memory, put
from zero_memory.access import projects as project_service
from zero_memory.access.visibility import visibility
from zero_memory.domain.oauth import OAuthClient, OAuthCode, OAuthGrant, OAuthToken, TokenKind
from zero_memory.domain.records import (
    CaptureChunk,
    ChunkStatus,
    Dispute,
    DisputeShape,
    DisputeStatus,
    Link,
    PortabilityCandidate,
    Project,
    pair_key,
)
from zero_memory.domain.scopes import ScopeKind
from zero_memory.ids import new_id
from zero_memory.store import system_tx
from zero_memory.store.postgres.adapter import PostgresStore

SECRET_TEAM = "team.bob.secret"  # bob's private team: alice is no member
SHARED = "proj.bob.api"  # bob's project, which alice may read
REFUSED = psycopg.errors.InsufficientPrivilege  # "new row violates row-level security policy"


@pytest.fixture
def bob(pg: PostgresStore) -> dict[str, str]:
    """Bob's memories in his root, his core, his private team and the project alice reads; his OAuth grant."""
    ids: dict[str, str] = {}
    with system_tx(pg, "seed", write=True) as tx:
        add_users(tx, "alice", "bob", "carol")
        for scope, kind, slug in ((SECRET_TEAM, "team", "secret"), (SHARED, "proj", "api")):
            tx.add_project(Project(scope, "bob", kind, slug, None, None, at()))
            tx.set_membership(scope, "bob", "admin", at())
        tx.set_membership(SHARED, "alice", "reader", at())
        for name, scope in (("root", "user.bob"), ("core", "user.bob.core"), ("team", SECRET_TEAM)):
            ids[name] = put(tx, memory(f"bob's {name} secret", owner="bob", scope=scope), axis(0)).id
        ids["shared"] = put(tx, memory("bob's api note for readers", owner="bob", scope=SHARED), axis(1)).id
        ids["alice"] = put(tx, memory("alice's own note", owner="alice", scope="user.alice"), axis(2)).id
        tx.add_oauth_client(OAuthClient("client-bob", "bob's laptop", None, {}, at()))
        grant = OAuthGrant(new_id("grant"), "bob", "client-bob", (), "http://127.0.0.1/mcp", at())
        tx.add_oauth_grant(grant)
        ids["grant"] = grant.id
    return ids


@contextmanager
def as_alice(pg: PostgresStore, *, write: bool = True) -> Iterator[Any]:
    """A transaction acting for alice, as a service opens one."""
    with pg.tx(write=write) as tx:
        visibility(tx, "alice")
        yield tx


def readable_by_alice(pg: PostgresStore) -> set[str]:
    """Every memory id alice's transaction reads, asked with no filter at all."""
    with as_alice(pg, write=False) as tx:
        return {r["id"] for r in tx._query("SELECT id FROM memories")}


def assert_bob_stays_private(pg: PostgresStore, bob: dict[str, str]) -> None:
    assert readable_by_alice(pg) == {bob["alice"], bob["shared"]}
    with system_tx(pg, "check") as tx:
        members = tx._query("SELECT scope, user_id, role FROM memberships ORDER BY scope, user_id")
        projects = tx._query("SELECT scope, owner FROM projects ORDER BY scope")
    assert [(m["scope"], m["user_id"], m["role"]) for m in members] == [
        (SHARED, "alice", "reader"),
        (SHARED, "bob", "admin"),
        (SECRET_TEAM, "bob", "admin"),
    ]
    assert [(p["scope"], p["owner"]) for p in projects] == [(SHARED, "bob"), (SECRET_TEAM, "bob")]


def test_a_user_cannot_add_herself_to_a_scope_she_does_not_manage(pg: PostgresStore, bob: dict[str, str]) -> None:
    """The reported attack: alice's own membership row in bob's private team, by the store and by raw SQL."""
    with pytest.raises(REFUSED), as_alice(pg) as tx:
        tx.set_membership(SECRET_TEAM, "alice", "admin", at())
    with pytest.raises(REFUSED), as_alice(pg) as tx:
        tx._exec(
            "INSERT INTO memberships(scope, user_id, role, created_at) VALUES (?, 'alice', 'reader', ?)",
            (SECRET_TEAM, at().isoformat()),
        )
    # Nor anyone else: she is a reader of bob's project, not its admin.
    with pytest.raises(REFUSED), as_alice(pg) as tx:
        tx._exec(
            "INSERT INTO memberships(scope, user_id, role, created_at) VALUES (?, 'carol', 'reader', ?)",
            (SHARED, at().isoformat()),
        )
    assert_bob_stays_private(pg, bob)


def test_a_user_cannot_raise_her_own_role(pg: PostgresStore, bob: dict[str, str]) -> None:
    """A reader of bob's project cannot make herself its admin, by the store's upsert or by an update."""
    with pytest.raises(REFUSED), as_alice(pg) as tx:
        tx.set_membership(SHARED, "alice", "admin", at())
    with pytest.raises(REFUSED), as_alice(pg) as tx:
        tx._exec("UPDATE memberships SET role = 'admin' WHERE user_id = 'alice'")
    assert_bob_stays_private(pg, bob)


def test_a_user_cannot_move_her_membership_to_another_scope(pg: PostgresStore, bob: dict[str, str]) -> None:
    with pytest.raises(REFUSED), as_alice(pg) as tx:
        tx._exec("UPDATE memberships SET scope = ? WHERE user_id = 'alice'", (SECRET_TEAM,))
    assert_bob_stays_private(pg, bob)


def test_a_user_cannot_make_a_project_of_another_users_personal_scope(pg: PostgresStore, bob: dict[str, str]) -> None:
    """The reported attack: a project row whose scope is user.bob (or his core), which she would then join."""
    for scope, kind, slug in (("user.bob", "proj", "bob"), ("user.bob.core", "team", "core")):
        with pytest.raises(REFUSED), as_alice(pg) as tx:
            tx.add_project(Project(scope, "alice", kind, slug, None, None, at()))
            tx.set_membership(scope, "alice", "admin", at())
    assert_bob_stays_private(pg, bob)


def test_a_user_creates_projects_only_in_her_own_namespace(pg: PostgresStore, bob: dict[str, str]) -> None:
    """proj.<uid>.<slug> and team.<uid>.<slug> are their creator's: no project in bob's name, nor owned by bob."""
    attempts = [
        Project("proj.bob.next", "alice", "proj", "next", None, None, at()),
        Project("team.bob.next", "alice", "team", "next", None, None, at()),
        Project("proj.alice.next", "bob", "proj", "next", None, None, at()),
        Project("proj.alice.x.y", "alice", "proj", "x.y", None, None, at()),
        Project("proj.alice.next", "alice", "proj", "other", None, None, at()),
    ]
    for project in attempts:
        with pytest.raises(REFUSED), as_alice(pg) as tx:
            tx.add_project(project)
    assert_bob_stays_private(pg, bob)


def test_a_user_cannot_take_over_a_project_she_is_a_member_of(pg: PostgresStore, bob: dict[str, str]) -> None:
    """Only a project's owner changes or removes its row; she changes no other member's row either."""
    with as_alice(pg) as tx:
        assert tx._exec("UPDATE projects SET owner = 'alice'") == 0
        assert tx._exec("DELETE FROM projects") == 0
        assert tx._exec("UPDATE memberships SET user_id = 'carol' WHERE user_id = 'bob'") == 0
        assert tx._exec("DELETE FROM memberships WHERE user_id = 'bob'") == 0
    assert_bob_stays_private(pg, bob)


def test_a_user_cannot_rename_her_own_project_into_another_users_scope(pg: PostgresStore, bob: dict[str, str]) -> None:
    with as_alice(pg) as tx:
        project_service.create_project(tx, "alice", "mine")
    with pytest.raises(REFUSED), as_alice(pg) as tx:
        tx._exec("UPDATE projects SET owner = 'bob' WHERE scope = 'proj.alice.mine'")
    with pytest.raises(REFUSED), as_alice(pg) as tx:
        tx._exec("UPDATE projects SET scope = 'user.bob', slug = 'bob' WHERE scope = 'proj.alice.mine'")
    with system_tx(pg, "check") as tx:
        assert tx.get_project("proj.alice.mine") is not None
    assert readable_by_alice(pg) == {bob["alice"], bob["shared"]}


def test_a_user_adds_memories_only_where_she_may_write(pg: PostgresStore, bob: dict[str, str]) -> None:
    """A reader of bob's project adds nothing to it (nor to his root, as before)."""
    for scope in (SHARED, "user.bob"):
        with pytest.raises(REFUSED), as_alice(pg) as tx:
            put(tx, memory("planted", owner="alice", scope=scope))
    with system_tx(pg, "check") as tx:
        assert tx._query("SELECT id FROM memories WHERE content = 'planted'") == []


def test_a_user_stages_captured_chunks_only_for_a_scope_she_may_write(pg: PostgresStore, bob: dict[str, str]) -> None:
    """The capture pass writes a chunk's statements into its scope: alice cannot aim one at bob's."""
    for scope in ("user.bob", SECRET_TEAM, SHARED):
        with pytest.raises(REFUSED), as_alice(pg) as tx:
            tx.add_chunk(
                CaptureChunk(
                    id=new_id("chk"),
                    owner="alice",
                    chunk_hash=scope.ljust(64, "0")[:64],
                    conversation_id="conversation",
                    client="test",
                    scope=scope,
                    transcript="user: plant this",
                    chars=16,
                    status=ChunkStatus.PENDING,
                    next_attempt_at=at(),
                    created_at=at(),
                    updated_at=at(),
                )
            )
    with system_tx(pg, "check") as tx:
        assert tx._query("SELECT id FROM capture_chunks") == []


def test_a_user_cannot_issue_a_code_or_token_under_another_users_grant(pg: PostgresStore, bob: dict[str, str]) -> None:
    """Exchanging a code or refreshing a token issues a token for the grant's user: not under bob's grant."""
    with pytest.raises(REFUSED), as_alice(pg) as tx:
        tx.add_oauth_code(
            OAuthCode("a" * 64, bob["grant"], "alice", "client-bob", "http://127.0.0.1/cb", True, "c" * 43, at(), at())
        )
    with pytest.raises(REFUSED), as_alice(pg) as tx:
        tx.add_oauth_token(
            OAuthToken(new_id("tok"), TokenKind.REFRESH, "digest", bob["grant"], "alice", "client-bob", at(), at())
        )
    with system_tx(pg, "check") as tx:
        assert tx._query("SELECT id FROM oauth_tokens") == []
        assert tx._query("SELECT grant_id FROM oauth_codes") == []


def test_what_hangs_off_memories_names_only_memories_she_can_see(pg: PostgresStore, bob: dict[str, str]) -> None:
    """A link, a review-queue row or a portability proposal of hers cannot point at bob's private memories:
    the queue row would sit in bob's queue, the proposal would act on his memory."""
    with pytest.raises(REFUSED), as_alice(pg) as tx:
        tx.add_link(Link(new_id("lnk"), bob["alice"], bob["root"], "relates_to", at(), "alice"))
    with pytest.raises(REFUSED), as_alice(pg) as tx:
        tx.add_dispute(
            Dispute(
                id=new_id("dsp"),
                owner="alice",
                shape=DisputeShape.PAIR,
                verdict="contradicts",
                origin="scan",
                status=DisputeStatus.PENDING,
                memory_a=bob["root"],
                memory_b=bob["core"],
                pair_key=pair_key(bob["root"], bob["core"]),
                created_at=at(),
            )
        )
    with pytest.raises(REFUSED), as_alice(pg) as tx:
        tx.add_portability(PortabilityCandidate(new_id("prt"), bob["root"], "alice", "pending", "user.bob", at()))
    with system_tx(pg, "check") as tx:
        for table in ("links", "disputes", "portability_candidates"):
            assert tx._query(f"SELECT * FROM {table}") == [], table


def test_word_counts_answer_only_a_system_pass(pg: PostgresStore, bob: dict[str, str]) -> None:
    """How many memories hold a word says that text exists: a user's transaction cannot ask it."""
    for sql in (
        "SELECT word, documents FROM zm_word_documents(ARRAY['secret'], 100)",
        "SELECT zm_memory_documents() AS n",
        "SELECT word, share FROM zm_common_words(1000, 0.0)",
    ):
        with pytest.raises(REFUSED), as_alice(pg, write=False) as tx:
            tx._query(sql)


def test_the_applications_own_paths_still_work_as_the_application_role(pg: PostgresStore, bob: dict[str, str]) -> None:
    """Creating a project (and its admin row), the system pass of ``zm project grant``, recall's full text."""
    with as_alice(pg) as tx:
        created = project_service.create_project(tx, "alice", "tools", kind=ScopeKind.TEAM)
        vis = visibility(tx, "alice")
        assert vis.can_write(created.scope)
        put(tx, memory("alice's tools note", owner="alice", scope=created.scope), axis(3))
    with system_tx(pg, "operator", write=True) as tx:
        project_service.grant(tx, "alice", created.scope, "carol", "reader")
    with pg.tx() as tx:
        visibility(tx, "carol")
        assert [r["content"] for r in tx._query("SELECT content FROM memories")] == ["alice's tools note"]
    with as_alice(pg, write=False) as tx:
        found = tx.fulltext("secret note", scopes=["user.alice", "user.bob", SECRET_TEAM], limit=10)
        assert found == [bob["alice"]]
        assert tx._query("SELECT current_setting('zm.system', true) AS s")[0]["s"] in ("", None)
