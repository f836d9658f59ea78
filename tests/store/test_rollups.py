"""Per-day rollups of surfacings and usage events (retention): counts survive, rows go."""

from __future__ import annotations

from datetime import timedelta

from tests.store.factories import T0, add_users, memory, put
from zero_memory.domain.records import Channel
from zero_memory.store import Store


def seed(store: Store) -> list[str]:
    with store.tx(write=True) as tx:
        add_users(tx, "alice", "bob")
        ids = [put(tx, memory(f"note {n}")).id for n in range(2)]
        for hours in (0, 1, 5, 30, 49, 49):
            at = T0 + timedelta(hours=hours)
            tx.add_usage_event(
                user_id="alice", tool="remember", client="c", outcome="ok", declared_supersede=hours == 1, at=at
            )
            tx.add_usage_event(user_id="bob", tool="recall", client="c", outcome="ok", declared_supersede=False, at=at)
            tx.add_surfacings("alice", ids, at, session_id="s1", channel=Channel.RECALL)
    return ids


def test_rolling_up_keeps_every_count_and_removes_the_old_rows(store: Store) -> None:
    ids = seed(store)
    with store.tx() as tx:
        usage_before = tx.usage_by_day(since=T0)
        served_before = tx.surfacings_by_day(since=T0)
    cutoff = T0 + timedelta(hours=40)
    with store.tx(write=True) as tx:
        assert tx.rollup_usage_events(before=cutoff) == 8
        assert tx.rollup_surfacings(before=cutoff) == 8
    with store.tx() as tx:
        assert tx.usage_by_day(since=T0) == usage_before
        assert tx.surfacings_by_day(since=T0) == served_before
        assert [e["at"][:13] for e in tx.usage_events(tool="remember")] == ["2026-01-03T10", "2026-01-03T10"]
        assert tx.count_rows("usage_events") == 4 and tx.count_rows("surfacings") == 4
        assert tx.count_rows("usage_event_days") == 5  # alice: day 1 plain, day 1 declared, day 2; bob: days 1, 2
        assert tx.count_rows("surfacing_days") == 4  # two memories, two days
        # Readers of recent surfacings see only what is kept.
        assert tx.surfacings_of(ids, since=cutoff) == {ids[0]: 2, ids[1]: 2}
    assert usage_before == [
        {
            "day": day,
            "user_id": user,
            "tool": tool,
            "client": "c",
            "outcome": "ok",
            "declared_supersede": declared,
            "count": count,
        }
        for day, user, tool, declared, count in [
            ("2026-01-01", "alice", "remember", 0, 2),
            ("2026-01-01", "alice", "remember", 1, 1),
            ("2026-01-01", "bob", "recall", 0, 3),
            ("2026-01-02", "alice", "remember", 0, 1),
            ("2026-01-02", "bob", "recall", 0, 1),
            ("2026-01-03", "alice", "remember", 0, 2),
            ("2026-01-03", "bob", "recall", 0, 2),
        ]
    ]


def test_a_second_rollup_adds_to_the_days_already_rolled_up(store: Store) -> None:
    seed(store)
    with store.tx() as tx:
        before = tx.usage_by_day(since=T0, tool="remember", user_id="alice")
    with store.tx(write=True) as tx:
        tx.rollup_usage_events(before=T0 + timedelta(hours=3))  # half of the first day
        tx.rollup_usage_events(before=T0 + timedelta(hours=3))  # nothing left to fold: no double count
        tx.rollup_usage_events(before=T0 + timedelta(days=5))
    with store.tx() as tx:
        assert tx.usage_by_day(since=T0, tool="remember", user_id="alice") == before
        assert tx.count_rows("usage_events") == 0
        assert tx.usage_by_day(since=T0 + timedelta(days=1), tool="recall") == [
            {
                "day": "2026-01-02",
                "user_id": "bob",
                "tool": "recall",
                "client": "c",
                "outcome": "ok",
                "declared_supersede": 0,
                "count": 1,
            },
            {
                "day": "2026-01-03",
                "user_id": "bob",
                "tool": "recall",
                "client": "c",
                "outcome": "ok",
                "declared_supersede": 0,
                "count": 2,
            },
        ]
