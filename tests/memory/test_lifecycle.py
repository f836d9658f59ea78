"""Lifecycle: forget, restore, close_loop, move, link, get_memory — add-only and reversible."""

from __future__ import annotations

import pytest

from tests.memory.helpers import write
from zero_memory import errors
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.memory import lifecycle
from zero_memory.store import SYSTEM, system_tx


def test_forget_keeps_the_row_and_restore_brings_it_back(app: App, alice: Caller) -> None:
    fact = write(app, alice, "The office wifi is called zm-guest")
    forgotten = lifecycle.forget(app, alice, fact.id, reason="moved offices")
    assert forgotten.changed and forgotten.invalidated_reason == "forgotten"
    with system_tx(app.store, "test") as tx:
        row = tx.get_memory(fact.id, SYSTEM)
    assert row.content == "The office wifi is called zm-guest"
    assert not lifecycle.forget(app, alice, fact.id).changed
    assert lifecycle.restore_memory(app, alice, fact.id).changed
    assert not lifecycle.restore_memory(app, alice, fact.id).changed
    actions = [a.action for a in lifecycle.get_memory(app, alice, fact.id).audit]
    assert actions == ["restore", "forget", "remember"]  # newest first


def test_close_loop_only_closes_open_loops(app: App, alice: Caller) -> None:
    task = write(app, alice, "Rotate the staging certificates", kind="task")
    fact = write(app, alice, "Certificates live in vault")
    closed = lifecycle.close_loop(app, alice, task.id, note="rotated")
    assert closed.invalidated_reason == "closed"
    with pytest.raises(errors.ZMError, match=r"^validation_failed: id: .* not an open loop"):
        lifecycle.close_loop(app, alice, fact.id)
    assert lifecycle.restore_memory(app, alice, task.id).changed


def test_move_reports_moved_unchanged_and_failed_and_keeps_the_original_scope(
    app: App, alice: Caller, bob: Caller
) -> None:
    a = write(app, alice, "Python's GIL blocks CPU-bound threads", project_hint="/x/api")
    b = write(app, alice, "The readme is in English", scope="core")
    theirs = write(app, bob, "Bob's note")
    result = lifecycle.move_memories(app, alice, [a.id, b.id, theirs.id, "mem_nope"], scope="core")
    assert result.moved == [a.id]
    assert result.unchanged == [b.id]
    assert [f.id for f in result.failed] == [theirs.id, "mem_nope"]
    assert all(f.error.startswith("not_found:") for f in result.failed)
    view = lifecycle.get_memory(app, alice, a.id).memory
    assert view.scope == "user.alice.core" and view.original_scope == "proj.alice.api"
    with system_tx(app.store, "test") as tx:
        assert tx.get_memory(theirs.id, SYSTEM).scope == "user.bob"


def test_link_relates_two_visible_memories_once(app: App, alice: Caller) -> None:
    a = write(app, alice, "The API uses JWT auth")
    b = write(app, alice, "JWTs are signed with RS256")
    assert lifecycle.link(app, alice, a.id, b.id, "relates_to").created
    assert not lifecycle.link(app, alice, a.id, b.id, "relates_to").created
    with pytest.raises(errors.ZMError, match=r"^validation_failed: type"):
        lifecycle.link(app, alice, a.id, b.id, "supersedes")
    with pytest.raises(errors.ZMError, match=r"^validation_failed: dst"):
        lifecycle.link(app, alice, a.id, a.id, "relates_to")
    links = lifecycle.get_memory(app, alice, b.id).links
    assert [(lk.src, lk.dst, lk.type) for lk in links] == [(a.id, b.id, "relates_to")]


@pytest.mark.parametrize("operation", ["get", "forget", "restore", "close", "link_src", "link_dst", "move"])
def test_another_users_memory_answers_exactly_like_a_missing_id(
    app: App, alice: Caller, bob: Caller, operation: str
) -> None:
    theirs = write(app, bob, "Bob's deploy token lives in 1password", kind="task")
    mine = write(app, alice, "Alice's note")

    def attempt(memory_id: str) -> str:
        try:
            if operation == "get":
                lifecycle.get_memory(app, alice, memory_id)
            elif operation == "forget":
                lifecycle.forget(app, alice, memory_id)
            elif operation == "restore":
                lifecycle.restore_memory(app, alice, memory_id)
            elif operation == "close":
                lifecycle.close_loop(app, alice, memory_id)
            elif operation == "link_src":
                lifecycle.link(app, alice, memory_id, mine.id, "relates_to")
            elif operation == "link_dst":
                lifecycle.link(app, alice, mine.id, memory_id, "relates_to")
            else:
                return lifecycle.move_memories(app, alice, [memory_id], scope="core").failed[0].error
        except errors.ZMError as error:
            return str(error)
        raise AssertionError("expected a refusal")

    missing = "mem_01zzzzzzzzzzzzzzzzzzzzzzzz"
    assert attempt(theirs.id).replace(theirs.id, "ID") == attempt(missing).replace(missing, "ID")
    assert attempt(theirs.id).startswith("not_found:")
    with system_tx(app.store, "test") as tx:
        assert tx.get_memory(theirs.id, SYSTEM).live


def test_a_shared_project_is_visible_to_members_only_and_readers_cannot_write(
    app: App, alice: Caller, bob: Caller
) -> None:
    from zero_memory.access.projects import create_project, grant

    with system_tx(app.store, "test", write=True) as tx:
        create_project(tx, "alice", "shared")
    fact = write(app, alice, "The shared service uses gRPC", scope="proj.alice.shared")
    with pytest.raises(errors.ZMError, match=r"^not_found:"):
        lifecycle.get_memory(app, bob, fact.id)
    with system_tx(app.store, "test", write=True) as tx:
        grant(tx, "alice", "proj.alice.shared", "bob", "reader")
    assert lifecycle.get_memory(app, bob, fact.id).memory.id == fact.id
    with pytest.raises(errors.ZMError, match="read-only"):
        lifecycle.forget(app, bob, fact.id)
    with pytest.raises(errors.ZMError, match="read-only"):
        write(app, bob, "Bob writes here", scope="proj.alice.shared")
    with system_tx(app.store, "test", write=True) as tx:
        grant(tx, "alice", "proj.alice.shared", "bob", "writer")
    assert write(app, bob, "Bob writes here", scope="proj.alice.shared").status == "created"
