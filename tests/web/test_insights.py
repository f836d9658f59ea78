"""The Insights aggregations: pure functions over audit, ledger and usage rows."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from typing import Any

from tests.web.helpers import Seeder, unique
from zero_memory import insights
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.domain.records import AuditEntry, CaptureChunk, ChunkStatus, Run, RunStatus
from zero_memory.insights import Column

START = date(2025, 3, 1)


def entry(
    day: int, action: str = "queue.raise", *, actor: str = "hygiene.scan", run_id: str | None = None, **payload: Any
) -> AuditEntry:
    at = datetime(2025, 3, day, 12, tzinfo=UTC)
    return AuditEntry(
        seq=day, at=at, actor=actor, action=action, owner="alice", memory_ids=[], payload=payload, run_id=run_id
    )


def run(run_id: str, day: int) -> Run:
    at = datetime(2025, 3, day, 9, tzinfo=UTC)
    return Run(run_id, "alice", "scan", RunStatus.COMPLETED, False, "alice", at, at, {})


def test_inflow_counts_rows_per_day_and_files_both_supersede_directions_together() -> None:
    rows = [
        entry(1, verdict="duplicate"),
        entry(1, verdict="a_supersedes_b"),
        entry(3, verdict="b_supersedes_a"),
        entry(3, verdict="challenged"),
        entry(3),
        entry(9, verdict="duplicate"),
    ]
    columns = insights.inflow_by_day(rows, start=START, days=3)
    assert [c.label for c in columns] == ["03-01", "03-02", "03-03"]
    assert [dict(c.values) for c in columns] == [
        {"duplicate": 1, "supersedes": 1},
        {},
        {"supersedes": 1, "challenged": 1, "unjudged": 1},
    ]


def test_dismissals_tell_the_stale_sweep_from_the_rejudge_pass() -> None:
    rows = [
        entry(2, "queue.dismiss", actor="hygiene.stale_sweep", stale=True),
        entry(2, "queue.dismiss", actor="hygiene.rejudge", rejudge="complementary"),
        entry(2, "queue.dismiss", actor="hygiene.rejudge", rejudge="unrelated"),
    ]
    columns = insights.dismissals_by_day(rows, start=START, days=2)
    assert dict(columns[1].values) == {"stale": 1, "rejudge": 2}


def test_actions_per_run_are_oldest_run_first_and_count_only_their_run() -> None:
    rows = [
        entry(2, "hygiene.auto_resolve", run_id="run_b", verdict="duplicate"),
        entry(2, "hygiene.auto_resolve", run_id="run_b", verdict="a_supersedes_b"),
        entry(1, "hygiene.auto_resolve", run_id="run_a", verdict="duplicate"),
        entry(1, "hygiene.auto_resolve", run_id=None, verdict="duplicate"),
    ]
    columns = insights.actions_per_run(rows, [run("run_c", 3), run("run_b", 2), run("run_a", 1)])
    assert [c.label for c in columns] == ["03-01", "03-02", "03-03"]
    assert [c.total for c in columns] == [1, 2, 0]
    assert dict(columns[1].values) == {"duplicate": 1, "supersedes": 1}


def test_tokens_sum_per_owner_and_purpose_most_first() -> None:
    rows = [
        {"owner": "alice", "purpose": "scan", "input_tokens": 100, "output_tokens": 20},
        {"owner": "alice", "purpose": "scan", "input_tokens": 50, "output_tokens": 10},
        {"owner": "alice", "purpose": "portability", "input_tokens": 400, "output_tokens": None},
    ]
    totals = insights.tokens_by_owner_and_purpose(rows)
    assert [(t.purpose, t.calls, t.input_tokens, t.output_tokens, t.total) for t in totals] == [
        ("portability", 1, 400, 0, 400),
        ("scan", 2, 150, 30, 180),
    ]


def test_the_supersede_share_counts_successful_writes_in_the_window_by_week() -> None:
    def write(day: int, declared: int, outcome: str = "ok") -> dict[str, Any]:
        return {"at": f"2025-03-{day:02d}T10:00:00.000000Z", "declared_supersede": declared, "outcome": outcome}

    events = [write(1, 1), write(2, 0), write(9, 1), write(9, 0, "validation_failed"), write(20, 1)]
    share = insights.supersede_share(events, start=START, days=14)
    assert (share.declared, share.total, share.ratio) == (2, 3, 2 / 3)
    assert [dict(w.values) for w in share.weeks] == [{"declared": 1, "plain": 1}, {"declared": 1}]
    assert insights.supersede_share([], start=START, days=7).ratio is None


def test_days_read_from_datetimes_and_store_text_alike() -> None:
    assert insights.day_of("2025-03-01T23:59:59.000000Z") == date(2025, 3, 1)
    assert insights.day_of(datetime(2025, 3, 2, 1, tzinfo=UTC) - timedelta(hours=2)) == date(2025, 3, 1)


def test_totals_keep_the_given_order_then_the_rest_and_drop_zeros() -> None:
    columns = [Column("a", {"b": 1, "zz": 2}), Column("b", {"a": 3, "b": 0})]
    assert list(insights.totals(columns, ["a", "b", "c"]).items()) == [("a", 3), ("b", 1), ("zz", 2)]


def test_insights_for_reads_only_the_callers_own_rows(app: App) -> None:
    seed = Seeder(app)
    seed.pair("alice", unique("Port 1"), unique("Port 2"), verdict="duplicate")
    seed.pair("bob", unique("Port 3"), unique("Port 4"), verdict="contradiction")
    with app.store.tx(write=True) as tx:
        for user, declared in (("alice", True), ("alice", False), ("bob", True)):
            tx.add_usage_event(
                user_id=user, tool="remember", client="x", outcome="ok", declared_supersede=declared, at=app.clock()
            )
        tx.add_ledger(
            owner="bob",
            model="m",
            purpose="scan",
            input_tokens=9,
            output_tokens=9,
            latency_ms=1,
            outcome="ok",
            run_id=None,
            at=app.clock(),
        )
    found = insights.insights_for(app, Caller("alice"))
    assert found.inflow_totals == {"duplicate": 1}
    assert (found.supersede.declared, found.supersede.total) == (1, 2)
    assert found.tokens == []
    assert len(found.inflow) == insights.WINDOW_DAYS


def chunk(day: int, status: ChunkStatus = ChunkStatus.DONE, **counts: int) -> CaptureChunk:
    at = datetime(2025, 3, day, 8, tzinfo=UTC)
    return CaptureChunk(
        id=f"chk_{day}_{status}",
        owner="alice",
        chunk_hash=f"{day:064d}",
        conversation_id="c",
        client="claude-code",
        scope="proj.alice.api",
        transcript=None,
        chars=100,
        status=status,
        next_attempt_at=at,
        created_at=at,
        updated_at=at,
        finished_at=at + timedelta(hours=1) if status is ChunkStatus.DONE else None,
        **counts,
    )


def test_captures_count_each_done_chunks_outcomes_on_the_day_it_finished() -> None:
    chunks = [
        chunk(1, created=2, yielded=1),
        chunk(1, created=1, absorbed=1, refused=1),
        chunk(2, ChunkStatus.FAILED, created=0),
        chunk(3, ChunkStatus.PENDING),
        chunk(3, yielded=2),
    ]
    columns = insights.captures_by_day(chunks, start=START, days=3)
    assert [dict(c.values) for c in columns] == [
        {"created": 3, "yielded": 1, "absorbed": 1, "refused": 1},
        {},
        {"yielded": 2},
    ]


def test_extraction_cost_counts_only_extract_calls_in_the_window() -> None:
    def row(day: int, purpose: str, tokens_in: int, tokens_out: int) -> dict[str, Any]:
        return {
            "at": f"2025-03-{day:02d}T10:00:00.000000Z",
            "purpose": purpose,
            "input_tokens": tokens_in,
            "output_tokens": tokens_out,
        }

    ledger = [row(1, "extract", 900, 100), row(2, "extract", 800, 0), row(2, "scan", 5, 5)]
    ledger.append(row(1, "extract", 1, 1) | {"at": "2025-02-28T23:00:00.000000Z"})
    found = insights.capture_of(
        [chunk(1, created=1), chunk(2, ChunkStatus.FAILED), chunk(3, ChunkStatus.PENDING)], ledger, start=START, days=7
    )
    assert (found.calls, found.input_tokens, found.output_tokens) == (2, 1_700, 100)
    assert found.chunks == {"pending": 1, "done": 1, "failed": 1}
    assert found.totals == {"created": 1}


def test_insights_read_only_the_callers_own_chunks(app: App) -> None:
    with app.store.tx(write=True) as tx:
        for staged, owner, counts in (
            (chunk(1), "bob", {"created": 4}),
            (chunk(2), "alice", {"created": 2, "yielded": 1}),
        ):
            tx.add_chunk(replace(staged, owner=owner, created_at=app.clock()))
            tx.update_chunk(staged.id, app.clock(), finished_at=app.clock(), **counts)
    found = insights.insights_for(app, Caller("alice"))
    assert found.capture.totals == {"created": 2, "yielded": 1}
    assert found.capture.allowance is not None and found.capture.allowance.user == "alice"
