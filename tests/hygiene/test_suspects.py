"""Stale-suspect detection counts each doubt once, and a person's settlement spends the evidence behind it.

Every challenge here goes through the real ``challenge`` service, as the MCP
tool calls it; on SQLite and PostgreSQL.
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
from zero_memory.store import system_tx
from zero_memory.store.base import SYSTEM, DisputeQuery

MakeApp = Callable[..., App]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.slow)])
def app(request: pytest.FixtureRequest, make_app: MakeApp) -> App:
    return make_app(backend=request.param, clock=Clock())


def signals(app: App, memory_id: str) -> list[AuditEntry]:
    with system_tx(app.store, "test") as tx:  # a named pass: PostgreSQL's row security hides rows from nobody
        return [e for e in tx.audit_for_memory(memory_id) if e.action == "challenge"]


def suspects(app: App) -> list[Dispute]:
    with system_tx(app.store, "test") as tx:
        rows = tx.list_disputes(DisputeQuery(owner="alice", status=None, limit=1000))
    assert rows, "the challenged rows are there to see"
    return [d for d in rows if d.verdict == "stale_suspect"]


def live(app: App, memory_id: str) -> bool:
    with system_tx(app.store, "test") as tx:
        found = tx.get_memory(memory_id, SYSTEM)
    return found is not None and found.live


def test_a_challenge_repeated_while_its_row_is_open_is_one_signal(app: App, alice: Caller) -> None:
    memory_id = write(app, alice, GREEN).id
    answers = [challenge(app, alice, memory_id, reason) for reason in ("It is blue now", "Still blue", "Blue!")]
    assert [a.created for a in answers] == [True, False, False]
    assert {a.dispute_id for a in answers} == {answers[0].dispute_id}
    (signal,) = signals(app, memory_id)
    assert signal.payload["reason"] == "It is blue now"
    _, summary = cycle(app)
    assert suspects(app) == [] and summary["stale_suspects"] == 0


@pytest.mark.parametrize("settle", ["uphold", "retire then restore"])
def test_a_memory_a_person_just_cleared_is_not_raised_as_a_suspect(app: App, alice: Caller, settle: str) -> None:
    memory_id = write(app, alice, GREEN).id
    dispute_id = challenge(app, alice, memory_id, "It is blue now").dispute_id
    challenge(app, alice, memory_id, "Still blue")
    if settle == "uphold":
        resolve_conflict(app, alice, dispute_id, KeepBoth())
    else:
        resolve_conflict(app, alice, dispute_id, Retire())
        restore_memory(app, alice, memory_id)
    _, summary = cycle(app)
    assert suspects(app) == [] and summary["stale_suspects"] == 0
    assert live(app, memory_id)


def test_each_settlement_spends_the_evidence_before_it(app: App, alice: Caller) -> None:
    memory_id = write(app, alice, GREEN).id
    for round_ in range(3):
        answer = challenge(app, alice, memory_id, f"It is blue now ({round_})")
        assert answer.created
        cycle(app)
        resolve_conflict(app, alice, answer.dispute_id, KeepBoth())
    _, summary = cycle(app)
    assert suspects(app) == [] and summary["stale_suspects"] == 0
    assert len(signals(app, memory_id)) == 3


def test_a_forgotten_memory_is_never_suspected(app: App, alice: Caller) -> None:
    memory_id = write(app, alice, GREEN).id
    challenge(app, alice, memory_id, "It is blue now")
    forget(app, alice, memory_id)
    cycle(app)
    assert suspects(app) == []
