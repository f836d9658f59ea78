"""Projects, membership and session attachment."""

from __future__ import annotations

from tests.store.factories import add_users, at
from zero_memory.domain.records import Membership, Project
from zero_memory.domain.scopes import Role
from zero_memory.store import Store


def project(
    owner: str, slug: str, *, path: str | None = None, remote: str | None = None, minutes: float = 0
) -> Project:
    return Project(f"proj.{owner}.{slug}", owner, "proj", slug, path, remote, at(minutes))


def test_a_project_reads_back_as_written(store: Store) -> None:
    api = project("alice", "api", path="/src/api", remote="git@example.com:a/api.git")
    with store.tx(write=True) as tx:
        add_users(tx, "alice")
        tx.add_project(api)
    with store.tx() as tx:
        assert tx.get_project("proj.alice.api") == api
        assert tx.get_project("proj.alice.web") is None


def test_projects_are_found_by_path_remote_or_slug(store: Store) -> None:
    alice_api = project("alice", "api", path="/src/api", remote="r1", minutes=1)
    bob_api = project("bob", "api", path="/home/bob/api", remote="r1", minutes=0)
    with store.tx(write=True) as tx:
        add_users(tx, "alice", "bob")
        tx.add_project(alice_api)
        tx.add_project(bob_api)
    with store.tx() as tx:
        assert tx.find_projects(path="/src/api") == [alice_api]
        assert tx.find_projects(remote="r1") == [bob_api, alice_api]
        assert tx.find_projects(slug="api") == [bob_api, alice_api]
        assert tx.find_projects(slug="web") == []
        assert tx.find_projects() == []


def test_projects_are_listed_by_scope_within_the_scopes_asked(store: Store) -> None:
    with store.tx(write=True) as tx:
        add_users(tx, "alice", "bob")
        tx.add_project(project("bob", "api"))
        tx.add_project(project("alice", "web"))
        tx.add_project(project("alice", "api"))
    with store.tx() as tx:
        assert [p.scope for p in tx.list_projects()] == ["proj.alice.api", "proj.alice.web", "proj.bob.api"]
        assert [p.scope for p in tx.list_projects(["proj.bob.api", "proj.alice.web", "proj.x.y"])] == [
            "proj.alice.web",
            "proj.bob.api",
        ]
        assert tx.list_projects([]) == []


def test_setting_a_membership_again_changes_the_role(store: Store) -> None:
    with store.tx(write=True) as tx:
        add_users(tx, "alice", "bob")
        tx.add_project(project("alice", "api"))
        tx.add_project(project("alice", "web"))
        tx.set_membership("proj.alice.api", "bob", Role.READER, at(0))
        tx.set_membership("proj.alice.api", "bob", Role.WRITER, at(1))
        tx.set_membership("proj.alice.web", "bob", Role.ADMIN, at(1))
    with store.tx() as tx:
        assert sorted(tx.memberships("bob"), key=lambda m: m.scope) == [
            Membership("proj.alice.api", "bob", Role.WRITER),
            Membership("proj.alice.web", "bob", Role.ADMIN),
        ]
        assert tx.memberships("alice") == []


def test_acting_as_a_member_reads_the_users_memberships(store: Store) -> None:
    """``act_as_member`` (one round trip on PostgreSQL) reads what ``memberships`` does."""
    with store.tx(write=True) as tx:
        add_users(tx, "alice", "bob")
        tx.add_project(project("alice", "api"))
        tx.add_project(project("alice", "web"))
        tx.set_membership("proj.alice.api", "bob", Role.READER, at(0))
        tx.set_membership("proj.alice.web", "bob", Role.ADMIN, at(1))
    with store.tx() as tx:
        members = tx.act_as_member("bob")
        assert sorted(members, key=lambda m: m.scope) == sorted(tx.memberships("bob"), key=lambda m: m.scope)
        assert {m.scope for m in members} == {"proj.alice.api", "proj.alice.web"}


def test_the_first_attach_of_a_session_wins(store: Store) -> None:
    with store.tx(write=True) as tx:
        assert tx.get_session("alice", "s1") is None
        assert tx.attach_session("alice", "s1", "proj.alice.api", at(0)) == "proj.alice.api"
        assert tx.attach_session("alice", "s1", "proj.alice.web", at(1)) == "proj.alice.api"
        assert tx.attach_session("bob", "s1", "proj.bob.web", at(1)) == "proj.bob.web"
    with store.tx() as tx:
        assert tx.get_session("alice", "s1") == "proj.alice.api"
        assert tx.get_session("bob", "s1") == "proj.bob.web"
