"""Stale suspects (docs/spec/hygiene.md §11): each misled session counts once, two raise a suspect, and only a
person's settlement spends the evidence.

Every challenge here goes through the real ``challenge`` service, as the MCP
tool calls it, each from a session of its own unless said otherwise; every
settlement through ``resolve_conflict``, as a person (the CLI, the dashboard)
or as an agent (MCP). On SQLite and PostgreSQL. tests/mcp/test_stale_suspects.py
shows the same through the MCP edge.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.hygiene.helpers import Clock
from tests.hygiene.pipeline import GREEN, cycle
from tests.memory.helpers import write
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.conflicts.challenge import challenge
from zero_memory.conflicts.choice import KeepBoth, Retire
from zero_memory.conflicts.resolve import resolve_conflict
from zero_memory.domain.records import AuditEntry, Dispute
from zero_memory.memory.lifecycle import forget, restore_memory
from zero_memory.store import SYSTEM, system_tx
from zero_memory.store.ports.review import DisputeQuery

MakeApp = Callable[..., App]

PERSON = Caller("alice", client="cli", author_kind="human")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.slow)])
def app(request: pytest.FixtureRequest, make_app: MakeApp) -> App:
    return make_app(backend=request.param, clock=Clock())


def agent(session: str) -> Caller:
    return Caller("alice", client="test-agent", session_id=session)


def signals(app: App, memory_id: str) -> list[AuditEntry]:
    with system_tx(app.store, "test") as tx:  # a named pass: PostgreSQL's row security hides rows from nobody
        return [e for e in tx.audit_for_memory(memory_id) if e.action == "challenge"]


def rows(app: App) -> list[Dispute]:
    """Alice's single-subject rows, in any status, oldest first."""
    with system_tx(app.store, "test") as tx:
        found = tx.list_disputes(DisputeQuery(owner="alice", status=None, shape="single", limit=1000))
    return sorted(found, key=lambda d: (d.created_at, d.id))


def suspects(app: App) -> list[Dispute]:
    return [d for d in rows(app) if d.verdict == "stale_suspect"]


def live(app: App, memory_id: str) -> bool:
    with system_tx(app.store, "test") as tx:
        found = tx.get_memory(memory_id, SYSTEM)
    return found is not None and found.live


def test_two_sessions_challenging_one_row_escalate_it_in_place(app: App, alice: Caller) -> None:
    memory_id = write(app, alice, GREEN).id
    first = challenge(app, agent("morning"), memory_id, "It is blue now")
    second = challenge(app, agent("evening"), memory_id, "Blue since the redesign")
    assert (first.created, second.created) == (True, False) and second.dispute_id == first.dispute_id
    assert sorted(s.payload["reason"] for s in signals(app, memory_id)) == ["Blue since the redesign", "It is blue now"]
    assert {s.payload["dispute_id"] for s in signals(app, memory_id)} == {first.dispute_id}

    run, summary = cycle(app)
    assert summary["stale_suspects"] == 1
    (row,) = rows(app)
    assert (row.id, row.verdict, row.origin, row.pending, row.run_id) == (
        first.dispute_id,
        "stale_suspect",
        "challenge",
        True,
        run.id,
    )
    _, again = cycle(app)
    assert again["stale_suspects"] == 0 and len(rows(app)) == 1
    # A challenge after the escalation still lands on the one open row.
    assert challenge(app, agent("night"), memory_id, "Still blue").dispute_id == first.dispute_id


def test_a_challenge_repeated_by_one_session_is_one_signal(app: App, alice: Caller) -> None:
    memory_id = write(app, alice, GREEN).id
    session = agent("morning")
    answers = [challenge(app, session, memory_id, reason) for reason in ("It is blue now", "Still blue", "Blue!")]
    assert [a.created for a in answers] == [True, False, False]
    assert {a.dispute_id for a in answers} == {answers[0].dispute_id}
    (signal,) = signals(app, memory_id)
    assert signal.payload["reason"] == "It is blue now"
    _, summary = cycle(app)
    assert suspects(app) == [] and summary["stale_suspects"] == 0
    challenge(app, agent("evening"), memory_id, "Blue here too")
    _, summary = cycle(app)
    assert summary["stale_suspects"] == 1


@pytest.mark.parametrize("settle", ["uphold", "retire then restore"])
def test_a_persons_dismissal_holds_until_new_sessions_are_misled(app: App, alice: Caller, settle: str) -> None:
    memory_id = write(app, alice, GREEN).id
    dispute_id = challenge(app, agent("morning"), memory_id, "It is blue now").dispute_id
    challenge(app, agent("evening"), memory_id, "Still blue")
    cycle(app)
    if settle == "uphold":
        resolve_conflict(app, PERSON, dispute_id, KeepBoth())
    else:
        resolve_conflict(app, PERSON, dispute_id, Retire())
        restore_memory(app, PERSON, memory_id)
    _, summary = cycle(app)
    assert summary["stale_suspects"] == 0 and [d.pending for d in rows(app)] == [False]
    assert live(app, memory_id)

    reopened = challenge(app, agent("next day"), memory_id, "Blue, I checked")
    _, summary = cycle(app)
    assert summary["stale_suspects"] == 0, "one new session is not enough"
    challenge(app, agent("next week"), memory_id, "Blue in production")
    _, summary = cycle(app)
    assert summary["stale_suspects"] == 1
    assert [(d.id, d.verdict) for d in rows(app) if d.pending] == [(reopened.dispute_id, "stale_suspect")]


def test_an_agent_settling_its_own_challenge_spends_nothing(app: App, alice: Caller) -> None:
    memory_id = write(app, alice, GREEN).id
    first = challenge(app, agent("morning"), memory_id, "It is blue now")
    challenge(app, agent("evening"), memory_id, "Still blue")
    resolve_conflict(app, agent("morning"), first.dispute_id, KeepBoth())  # before any cycle saw it
    _, summary = cycle(app)
    assert summary["stale_suspects"] == 1
    (suspect,) = suspects(app)
    assert suspect.pending and suspect.origin == "stale_suspect" and suspect.id != first.dispute_id

    resolve_conflict(app, agent("evening"), suspect.id, KeepBoth())
    _, summary = cycle(app)
    assert summary["stale_suspects"] == 1, "what two sessions raised comes back until a person looks"
    (pending,) = [d for d in suspects(app) if d.pending]
    resolve_conflict(app, PERSON, pending.id, KeepBoth())
    _, summary = cycle(app)
    assert summary["stale_suspects"] == 0


def test_signals_older_than_the_window_do_not_count(app: App, alice: Caller) -> None:
    clock = app.clock
    assert isinstance(clock, Clock)
    memory_id = write(app, alice, GREEN).id
    first = challenge(app, agent("spring"), memory_id, "It is blue now")
    resolve_conflict(app, agent("spring"), first.dispute_id, KeepBoth())
    clock.advance(days=app.settings.hygiene.stale_suspect_window_days + 1)
    challenge(app, agent("autumn"), memory_id, "Blue")
    _, summary = cycle(app)
    assert summary["stale_suspects"] == 0
    challenge(app, agent("winter"), memory_id, "Blue again")
    _, summary = cycle(app)
    assert summary["stale_suspects"] == 1


def test_a_forgotten_memory_is_never_suspected(app: App, alice: Caller) -> None:
    memory_id = write(app, alice, GREEN).id
    challenge(app, agent("morning"), memory_id, "It is blue now")
    challenge(app, agent("evening"), memory_id, "Still blue")
    forget(app, alice, memory_id)
    cycle(app)
    assert suspects(app) == []
