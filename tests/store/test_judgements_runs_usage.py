"""The judgement cache, scan runs, the usage ledger, usage events and surfacings."""

from __future__ import annotations

from tests.store.factories import add_users, at, memory, put
from zero_memory.domain.records import Channel, Judgement, Run, RunStatus
from zero_memory.store import Store


def test_a_judgement_is_cached_per_pair_and_model_and_replaced(store: Store) -> None:
    first = Judgement("duplicate", 0.91, "same fact", "judge-1")
    with store.tx(write=True) as tx:
        assert tx.get_judgement("a|b", "judge-1") is None
        tx.put_judgement("a|b", first, at(0))
        tx.put_judgement("a|b", Judgement("unrelated", 0.3, "other", "judge-2"), at(0))
    with store.tx() as tx:
        assert tx.get_judgement("a|b", "judge-1") == first
    again = Judgement("contradiction", 0.55, "changed its mind", "judge-1")
    with store.tx(write=True) as tx:
        tx.put_judgement("a|b", again, at(1))
    with store.tx() as tx:
        assert tx.get_judgement("a|b", "judge-1") == again
        assert tx.get_judgement("a|b", "judge-2") == Judgement("unrelated", 0.3, "other", "judge-2")
        assert tx.get_judgement("b|c", "judge-1") is None
        assert tx.judgements_of("a|b") == [again, Judgement("unrelated", 0.3, "other", "judge-2")]
        assert tx.judgements_of("b|c") == []


def run(id: str, *, owner: str | None = "alice", minutes: float = 0, dry_run: bool = False, kind: str = "scan") -> Run:
    return Run(id, owner, kind, RunStatus.RUNNING, dry_run, "hygiene.scan", at(minutes), None, {})


def test_a_run_starts_and_finishes(store: Store) -> None:
    with store.tx(write=True) as tx:
        assert tx.claim_run(run("run_1", dry_run=True))
    with store.tx() as tx:
        assert tx.get_run("run_1") == run("run_1", dry_run=True)
        assert tx.get_run("run_9") is None
    with store.tx(write=True) as tx:
        tx.finish_run("run_1", RunStatus.COMPLETED, {"pairs": 3, "by_verdict": {"duplicate": 1}}, at(9))
    with store.tx() as tx:
        done = tx.get_run("run_1")
    assert done is not None
    assert (done.status, done.finished_at, done.summary) == (
        RunStatus.COMPLETED,
        at(9),
        {"pairs": 3, "by_verdict": {"duplicate": 1}},
    )


def test_runs_are_listed_newest_first_and_by_status(store: Store) -> None:
    with store.tx(write=True) as tx:
        assert tx.claim_run(run("run_1", minutes=0))
        assert tx.claim_run(run("run_2", minutes=1, owner=None))
        assert tx.claim_run(run("run_3", minutes=2, owner="bob"))
        assert tx.claim_run(run("run_4", minutes=3, kind="on_write"))
        tx.finish_run("run_2", RunStatus.FAILED, {}, at(3))
        tx.finish_run("run_4", RunStatus.COMPLETED, {}, at(3))
    with store.tx() as tx:
        assert [r.id for r in tx.list_runs()] == ["run_4", "run_3", "run_2", "run_1"]
        assert [r.id for r in tx.list_runs(limit=1)] == ["run_4"]
        assert [r.id for r in tx.list_runs(owner="alice")] == ["run_4", "run_1"]
        assert [r.id for r in tx.list_runs(owner="alice", kinds=["on_write"])] == ["run_4"]
        assert [r.id for r in tx.list_runs(owner="alice", not_kinds=["on_write"], limit=1)] == ["run_1"]
        assert [r.id for r in tx.runs_with_status(RunStatus.RUNNING)] == ["run_1", "run_3"]
        assert [r.id for r in tx.runs_with_status(RunStatus.FAILED)] == ["run_2"]
        assert tx.runs_with_status(RunStatus.INTERRUPTED) == []


def test_the_ledger_records_judge_calls_by_owner_and_run(store: Store) -> None:
    with store.tx(write=True) as tx:
        for owner, run_id in (("alice", "run_1"), ("bob", "run_1"), ("alice", None)):
            tx.add_ledger(
                owner=owner,
                model="judge-1",
                purpose="scan",
                input_tokens=1200,
                output_tokens=80,
                latency_ms=900,
                outcome="ok",
                run_id=run_id,
                at=at(0),
            )
    with store.tx() as tx:
        everything = tx.ledger()
        assert [(r["owner"], r["run_id"]) for r in everything] == [
            ("alice", "run_1"),
            ("bob", "run_1"),
            ("alice", None),
        ]
        first = everything[0]
        assert (first["model"], first["purpose"], first["input_tokens"], first["output_tokens"]) == (
            "judge-1",
            "scan",
            1200,
            80,
        )
        assert (first["latency_ms"], first["outcome"]) == (900, "ok")
        assert len(tx.ledger(owner="alice")) == 2
        assert len(tx.ledger(run_id="run_1")) == 2
        assert len(tx.ledger(owner="alice", run_id="run_1")) == 1


def test_usage_events_by_tool_and_since(store: Store) -> None:
    with store.tx(write=True) as tx:
        tx.add_usage_event(
            user_id="alice", tool="remember", client="cc", outcome="ok", declared_supersede=True, at=at(0)
        )
        tx.add_usage_event(
            user_id="alice", tool="recall", client="cc", outcome="ok", declared_supersede=False, at=at(1)
        )
        tx.add_usage_event(
            user_id="bob", tool="remember", client="cur", outcome="err", declared_supersede=False, at=at(2)
        )
    with store.tx() as tx:
        assert [e["tool"] for e in tx.usage_events()] == ["remember", "recall", "remember"]
        remembers = tx.usage_events(tool="remember")
        assert [(e["user_id"], e["declared_supersede"]) for e in remembers] == [("alice", 1), ("bob", 0)]
        assert [e["user_id"] for e in tx.usage_events(since=at(1))] == ["alice", "bob"]
        assert [e["client"] for e in tx.usage_events(tool="remember", since=at(1))] == ["cur"]


def test_surfacings_are_counted_since_a_moment(store: Store) -> None:
    with store.tx(write=True) as tx:
        tx.add_surfacings("alice", ["mem_a", "mem_b", "mem_c"], at(0), session_id="s1", channel=Channel.RECALL)
        tx.add_surfacings("alice", ["mem_a", "mem_b"], at(5), session_id=None, channel=Channel.CLI)
        tx.add_surfacings("bob", ["mem_b", "mem_a"], at(6), session_id="s2", channel=Channel.RECALL)
        tx.add_surfacings("bob", [], at(7), session_id="s2", channel=Channel.RECALL)
    with store.tx() as tx:
        assert tx.surfacing_counts(since=at(0), min_count=2) == [("mem_a", 3), ("mem_b", 3)]
        assert tx.surfacing_counts(since=at(0), min_count=1) == [("mem_a", 3), ("mem_b", 3), ("mem_c", 1)]
        assert tx.surfacing_counts(since=at(5), min_count=2) == [("mem_a", 2), ("mem_b", 2)]
        assert tx.surfacing_counts(since=at(8), min_count=1) == []
        assert tx.surfacings_of(["mem_a", "mem_c", "mem_z"], since=at(1)) == {"mem_a": 2}
        assert tx.surfacings_of([], since=at(0)) == {}


def test_sessions_served_counts_each_session_of_a_channel_once(store: Store) -> None:
    with store.tx(write=True) as tx:
        add_users(tx, "alice")
        for name in ("mem_a", "mem_b", "mem_c"):  # mem_z is never stored
            put(tx, memory(name, id=name))
        for minute in range(3):
            tx.add_surfacings("alice", ["mem_a", "mem_b"], at(minute), session_id="s1", channel=Channel.RECALL)
        tx.add_surfacings("alice", ["mem_a"], at(4), session_id="s2", channel=Channel.RECALL)
        tx.add_surfacings("alice", ["mem_a", "mem_c"], at(5), session_id=None, channel=Channel.RECALL)
        tx.add_surfacings("alice", ["mem_a", "mem_c"], at(6), session_id=None, channel=Channel.CLI)
        tx.add_surfacings("alice", ["mem_c"], at(7), session_id="s3", channel=Channel.CLI)
    with store.tx() as tx:
        served = tx.sessions_served(["mem_a", "mem_b", "mem_c", "mem_z"], since=at(0), channel=Channel.RECALL)
        assert served == {"mem_a": 2, "mem_b": 1}
        assert tx.sessions_served(["mem_a"], since=at(1), channel=Channel.RECALL) == {"mem_a": 2}
        assert tx.sessions_served(["mem_a"], since=at(5), channel=Channel.RECALL) == {}
        assert tx.sessions_served(["mem_c"], since=at(0), channel=Channel.CLI) == {"mem_c": 1}
        assert tx.sessions_served([], since=at(0), channel=Channel.RECALL) == {}
        # Re-examination still sees all traffic, of every channel, with or without a session.
        assert tx.surfacings_of(["mem_a", "mem_c"], since=at(0)) == {"mem_a": 6, "mem_c": 3}
