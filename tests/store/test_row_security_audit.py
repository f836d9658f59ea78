"""Row-level security on PostgreSQL: a user's transaction appends audit rows about her own doing only.

docs/deployment.md (Row-level security, guarantee 9) states the rule; migration 0028 enforces it. Each
test is tried as alice against bob through a transaction that acts for alice the way the services do
(``visibility(tx, "alice")``), as the unprivileged role the servers run as (tests/pg.py), and pairs what
is refused with what the application appends legitimately in the same shape, which still goes in.
A refused append ends its transaction; a system pass then reads what bob's trail holds.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest

from tests.store.factories import add_users, at, axis, memory, put
from zero_memory import transitions
from zero_memory.access.visibility import visibility
from zero_memory.domain.records import Project, Run, RunStatus
from zero_memory.store import system_tx
from zero_memory.store.postgres.adapter import PostgresStore

SHARED = "proj.bob.api"  # bob's project, which alice reads
REFUSED = psycopg.errors.InsufficientPrivilege  # "new row violates row-level security policy"


@pytest.fixture
def bob(pg: PostgresStore) -> dict[str, str]:
    """Bob's private memory, his memory in the project alice reads, alice's own memory, and bob's run."""
    ids: dict[str, str] = {}
    with system_tx(pg, "seed", write=True) as tx:
        add_users(tx, "alice", "bob")
        tx.add_project(Project(SHARED, "bob", "proj", "api", None, None, at()))
        tx.set_membership(SHARED, "bob", "admin", at())
        tx.set_membership(SHARED, "alice", "reader", at())
        ids["private"] = put(tx, memory("bob's private note", owner="bob", scope="user.bob"), axis(0)).id
        ids["shared"] = put(tx, memory("bob's api note for readers", owner="bob", scope=SHARED), axis(1)).id
        ids["alice"] = put(tx, memory("alice's own note", owner="alice", scope="user.alice"), axis(2)).id
        run = Run.running("run_bob", owner="bob", kind="scan", started_by="bob", at=at())
        assert tx.claim_run(run)
        ids["run"] = run.id
    return ids


@contextmanager
def as_alice(pg: PostgresStore) -> Iterator[Any]:
    """A write transaction acting for alice, as a service opens one."""
    with pg.tx(write=True) as tx:
        visibility(tx, "alice")
        yield tx


def append(
    tx: Any, *, owner: str | None, actor: str = "alice", memory_ids: list[str] | None = None, run_id: str | None = None
) -> int:
    return int(
        tx.add_audit(
            actor=actor,
            action="note",
            owner=owner,
            memory_ids=memory_ids or [],
            payload={},
            run_id=run_id,
            at=at(),
        )
    )


def bobs_trail(pg: PostgresStore) -> list[tuple[str, str | None, str]]:
    """(actor, owner, action) of every audit row bob reads as his: his own, in his name, or on his memories."""
    with pg.tx() as tx:
        visibility(tx, "bob")
        rows = tx._query("SELECT actor, owner, action FROM audit ORDER BY seq")
    return [(r["actor"], r["owner"], r["action"]) for r in rows]


def linked_to(pg: PostgresStore, memory_id: str) -> list[str]:
    """The actions of the audit rows linked to a memory, read past every policy."""
    with system_tx(pg, "check") as tx:
        return [a.action for a in tx.audit_for_memory(memory_id)]


def test_a_user_appends_under_another_owner_only_about_a_memory_of_his_she_may_read(
    pg: PostgresStore, bob: dict[str, str]
) -> None:
    """An action on bob's memory in a project she reads is audited under bob; nothing else of hers is."""
    for named in ([], [bob["private"]], [bob["alice"]]):
        with pytest.raises(REFUSED), as_alice(pg) as tx:
            append(tx, owner="bob", memory_ids=named)
    with pytest.raises(REFUSED), as_alice(pg) as tx:
        tx._exec(
            "INSERT INTO audit(at, actor, action, owner, memory_ids, payload) "
            "VALUES (?, 'alice', 'x', 'bob', '[]', '{}')",
            (at().isoformat(),),
        )
    with pytest.raises(REFUSED), as_alice(pg) as tx:
        append(tx, owner=None)  # a row of no one's is a system pass's
    assert bobs_trail(pg) == []

    with as_alice(pg) as tx:
        shared = tx.get_memories([bob["shared"]], visibility(tx, "alice"))[bob["shared"]]
        assert transitions.pin(tx, shared, actor="alice", at=at())
        append(tx, owner="alice")
    assert bobs_trail(pg) == [("alice", "bob", "pin")]


def test_a_user_links_audit_rows_only_to_memories_she_may_read(pg: PostgresStore, bob: dict[str, str]) -> None:
    """Bob's private memory gains no audit entry from her, under her name or his; the one she reads does."""
    with pytest.raises(REFUSED), as_alice(pg) as tx:
        append(tx, owner="alice", memory_ids=[bob["private"]])
    with pytest.raises(REFUSED), as_alice(pg) as tx:
        seq = append(tx, owner="alice")
        tx._exec("INSERT INTO audit_memories(audit_seq, memory_id) VALUES (?, ?)", (seq, bob["private"]))
    assert linked_to(pg, bob["private"]) == []

    with as_alice(pg) as tx:
        append(tx, owner="alice", memory_ids=[bob["alice"], bob["shared"]])
    assert linked_to(pg, bob["shared"]) == ["note"]
    assert linked_to(pg, bob["alice"]) == ["note"]


def test_a_user_writes_in_no_other_users_name(pg: PostgresStore, bob: dict[str, str]) -> None:
    """Rows in bob's name would be read by bob as his own doing; the automatic actors' names (with a dot, which
    no user name has) and the operator's are what a user's transaction writes besides her own."""
    with pytest.raises(REFUSED), as_alice(pg) as tx:
        append(tx, owner="alice", actor="bob")
    with pytest.raises(REFUSED), as_alice(pg) as tx:
        append(tx, owner="bob", actor="bob", memory_ids=[bob["shared"]])
    assert bobs_trail(pg) == []

    with as_alice(pg) as tx:
        for actor in ("alice", "hygiene.verify", "operator"):
            append(tx, owner="alice", actor=actor)
    with system_tx(pg, "check") as tx:
        actors = [r["actor"] for r in tx._query("SELECT actor FROM audit WHERE owner = 'alice' ORDER BY seq")]
    assert actors == ["alice", "hygiene.verify", "operator"]


def test_a_user_attaches_audit_rows_only_to_her_own_runs(pg: PostgresStore, bob: dict[str, str]) -> None:
    """Bob's run page lists the rows that name his run: none of hers; a run she starts takes its rows."""
    with pytest.raises(REFUSED), as_alice(pg) as tx:
        append(tx, owner="bob", memory_ids=[bob["shared"]], run_id=bob["run"])
    with system_tx(pg, "check") as tx:
        assert tx.audit_for_run(bob["run"]) == []

    with as_alice(pg) as tx:
        run = Run.running("run_alice", owner="alice", kind="verify", started_by="alice", at=at())
        assert transitions.start_run(tx, run, at=at())
        append(tx, owner="bob", memory_ids=[bob["shared"]], run_id=run.id)
    with system_tx(pg, "check") as tx:
        assert [(a.actor, a.owner) for a in tx.audit_for_run(run.id)] == [("hygiene.verify", "alice"), ("alice", "bob")]


def test_a_run_she_starts_over_a_teammates_memory_is_his_in_her_name_as_its_starter(
    pg: PostgresStore, bob: dict[str, str]
) -> None:
    """Verifying her project, alice changes bob's memory in a run of bob's (his to undo): she claims it only as
    its starter, and its rows go under bob; a run of bob's that bob started stays closed to her."""
    with pytest.raises(REFUSED), as_alice(pg) as tx:
        tx.claim_run(Run.running("run_forged", owner="bob", kind="verify", started_by="bob", at=at()))
    with as_alice(pg) as tx:
        run = Run.running("run_for_bob", owner="bob", kind="verify", started_by="alice", at=at())
        assert transitions.start_run(tx, run, at=at())
        append(tx, owner="bob", memory_ids=[bob["shared"]], run_id=run.id)
        transitions.finish_run(tx, run, RunStatus.COMPLETED, {"reanchored": 1}, at=at())
        assert [r.id for r in tx.list_runs(owner="bob")] == [run.id]  # not bob's own run
    assert bobs_trail(pg) == [
        ("hygiene.verify", "bob", "run.start"),
        ("alice", "bob", "note"),
        ("hygiene.verify", "bob", "run.stop"),
    ]
    with system_tx(pg, "check") as tx:
        finished = tx.get_run(run.id)
    assert finished is not None and (finished.owner, finished.started_by, finished.status) == (
        "bob",
        "alice",
        RunStatus.COMPLETED,
    )


def test_a_bulk_import_appends_its_rows_as_the_user(pg: PostgresStore, bob: dict[str, str]) -> None:
    """The import's batch (one statement, rows and links together) is hers, about her memories: it goes in; the
    same batch about bob's private memory does not."""
    with as_alice(pg) as tx:
        tx.add_memory_audits(
            actor="alice", action="import", owner="alice", payloads=[(bob["alice"], {})], run_id=None, at=at()
        )
    assert linked_to(pg, bob["alice"]) == ["import"]
    with pytest.raises(REFUSED), as_alice(pg) as tx:
        tx.add_memory_audits(
            actor="alice", action="import", owner="alice", payloads=[(bob["private"], {})], run_id=None, at=at()
        )
    assert linked_to(pg, bob["private"]) == []


def test_a_user_links_only_her_rows_to_the_memories_they_name(pg: PostgresStore, bob: dict[str, str]) -> None:
    """Linked to her own memory, bob's account row would show in her memory's trail; her row links to the
    memory it names, not to another."""
    with system_tx(pg, "seed", write=True) as tx:
        bobs = append(tx, owner="bob", actor="bob")
    with pytest.raises(REFUSED), as_alice(pg) as tx:
        tx._exec("INSERT INTO audit_memories(audit_seq, memory_id) VALUES (?, ?)", (bobs, bob["alice"]))
    with pytest.raises(REFUSED), as_alice(pg) as tx:
        seq = append(tx, owner="alice", memory_ids=[bob["alice"]])
        tx._exec("INSERT INTO audit_memories(audit_seq, memory_id) VALUES (?, ?)", (seq, bob["shared"]))
    assert linked_to(pg, bob["alice"]) == []
    assert linked_to(pg, bob["shared"]) == []

    with as_alice(pg) as tx:
        shared = tx.get_memories([bob["shared"]], visibility(tx, "alice"))[bob["shared"]]
        assert transitions.pin(tx, shared, actor="alice", at=at())
    assert linked_to(pg, bob["shared"]) == ["pin"]
