"""Usage events and surfacings: written at once, or in batches while a server runs, never twice."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from tests.memory.helpers import write
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.clock import utcnow
from zero_memory.domain.records import Channel
from zero_memory.memory.recall import recall
from zero_memory.store import open_store, system_tx
from zero_memory.telemetry import Surfacing, UsageEvent

# Long enough that only the test's own flush() or stop() writes a batch.
NEVER_S = 3600.0


def usage(user: str = "alice", tool: str = "recall") -> UsageEvent:
    return UsageEvent(
        user_id=user, tool=tool, client="test-client", outcome="ok", declared_supersede=False, at=utcnow()
    )


def events(app: App) -> list[tuple[str, str]]:
    with system_tx(app.store, "test") as tx:
        return [(e["user_id"], e["tool"]) for e in tx.usage_events()]


def served(app: App, memory_id: str) -> tuple[int, int]:
    """How often a memory was surfaced, and in how many sessions on the recall channel."""
    since = utcnow() - timedelta(days=1)
    with system_tx(app.store, "test") as tx:
        return (
            tx.surfacings_of([memory_id], since=since).get(memory_id, 0),
            tx.sessions_served([memory_id], since=since, channel=Channel.RECALL).get(memory_id, 0),
        )


def test_without_a_server_each_row_is_written_when_recorded(app: App) -> None:
    app.telemetry.record(usage())
    assert events(app) == [("alice", "recall")]
    assert not app.telemetry.buffering


def test_while_buffering_rows_wait_for_their_batch(app: App) -> None:
    app.telemetry.start(interval_s=NEVER_S)
    app.telemetry.record(usage(tool="remember"))
    app.telemetry.record(usage(user="bob"))
    assert events(app) == []
    assert app.telemetry.flush() == 2
    assert events(app) == [("alice", "remember"), ("bob", "recall")]
    assert app.telemetry.flush() == 0
    assert events(app) == [("alice", "remember"), ("bob", "recall")]


def test_a_full_batch_is_written_without_waiting_for_the_interval(app: App) -> None:
    app.telemetry.start(interval_s=NEVER_S, rows=3)
    for _ in range(3):
        app.telemetry.record(usage())
    app.telemetry.stop()  # joins the flusher, which the third row woke
    assert events(app) == [("alice", "recall")] * 3


def test_stopping_writes_what_waits_and_writes_later_rows_at_once(app: App) -> None:
    app.telemetry.start(interval_s=NEVER_S)
    app.telemetry.record(usage(tool="remember"))
    app.telemetry.stop()
    assert events(app) == [("alice", "remember")]
    app.telemetry.record(usage(tool="forget"))
    assert events(app) == [("alice", "remember"), ("alice", "forget")]


def test_closing_the_app_writes_what_waits(app: App) -> None:
    app.telemetry.start(interval_s=NEVER_S)
    app.telemetry.record(usage())
    app.close()
    store = open_store(app.settings.database_url)
    try:
        with system_tx(store, "test") as tx:
            assert [(e["user_id"], e["tool"]) for e in tx.usage_events()] == [("alice", "recall")]
    finally:
        store.close()


def test_a_refused_batch_is_written_once_when_the_database_accepts_it(app: App, alice: Caller) -> None:
    memory = write(app, alice, "The deploy script lives in ops/deploy.sh")
    conn = app.store._connection()  # type: ignore[attr-defined]
    conn.execute("CREATE TABLE refuse (x)")
    conn.execute("INSERT INTO refuse VALUES (1)")
    conn.execute(
        "CREATE TRIGGER refuse_surfacings BEFORE INSERT ON surfacings WHEN EXISTS (SELECT 1 FROM refuse) "
        "BEGIN SELECT RAISE(ABORT, 'refused'); END"
    )
    app.telemetry.start(interval_s=NEVER_S)
    app.telemetry.record(usage())
    app.telemetry.record(Surfacing("alice", (memory.id,), utcnow(), "s1", Channel.RECALL))
    # The usage event went in before the surfacing was refused: the batch rolls back whole, and waits.
    assert app.telemetry.flush() == 0
    assert events(app) == []
    conn.execute("DELETE FROM refuse")
    assert app.telemetry.flush() == 2
    assert events(app) == [("alice", "recall")]
    assert served(app, memory.id) == (1, 1)


def test_rows_of_users_and_memories_that_are_gone_are_dropped(app: App, alice: Caller) -> None:
    memory = write(app, alice, "Staging runs on Kubernetes 1.31")
    app.telemetry.start(interval_s=NEVER_S)
    app.telemetry.record(usage(user="erased"))
    app.telemetry.record(Surfacing("erased", (memory.id,), utcnow(), "s1", Channel.RECALL))
    app.telemetry.record(
        Surfacing("alice", (memory.id, "mem_01zzzzzzzzzzzzzzzzzzzzzzzx"), utcnow(), "s1", Channel.RECALL)
    )
    app.telemetry.stop()
    assert events(app) == []
    assert served(app, memory.id) == (1, 1)


def test_buffered_recalls_reinforce_once_per_session(app: App, alice: Caller) -> None:
    memory = write(app, alice, "Releases are cut from the main branch on Tuesdays")
    app.telemetry.start(interval_s=NEVER_S)
    for session in ("s1", "s1", "s2"):
        hits = recall(app, replace(alice, session_id=session), "when are releases cut").hits
        assert hits[0].id == memory.id
    app.telemetry.stop()
    assert served(app, memory.id) == (3, 2)


def test_a_dashboard_recall_records_nothing_while_buffering(app: App, alice: Caller) -> None:
    memory = write(app, alice, "The cache TTL is ten minutes")
    app.telemetry.start(interval_s=NEVER_S)
    assert recall(app, alice, "cache TTL", channel=None).hits[0].id == memory.id
    app.telemetry.stop()
    assert served(app, memory.id) == (0, 0)


@pytest.mark.parametrize("channel", [Channel.CLI, Channel.BRIEFING])
def test_traffic_that_is_not_an_agents_recall_never_reinforces(app: App, alice: Caller, channel: Channel) -> None:
    memory = write(app, alice, "Logs are shipped to Loki")
    app.telemetry.start(interval_s=NEVER_S)
    recall(app, replace(alice, session_id="s1"), "where do logs go", channel=channel)
    app.telemetry.stop()
    assert served(app, memory.id) == (1, 0)
