"""Retention end to end: ``zm db rollup`` and the scheduled tick fold old rows into per-day counts.

The Insights figures and the re-examination candidates read the same before and
after, on both stores; audit rows are all kept.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from tests.cli.harness import run_binary, run_in_process
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.domain.records import Channel
from zero_memory.hygiene import retention
from zero_memory.hygiene.reexamine import candidates
from zero_memory.hygiene.scheduler import run_tick
from zero_memory.insights import insights_for
from zero_memory.memory.models import RememberRequest
from zero_memory.memory.write import remember
from zero_memory.store import system_tx

NOW = datetime(2026, 6, 30, 12, 0, tzinfo=UTC)


@pytest.fixture(params=["sqlite", "postgres"])
def aged(request: pytest.FixtureRequest, make_app: Callable[..., App]) -> App:
    """An app whose clock is NOW, with a year of traffic: usage events and surfacings every ten days."""
    app = make_app({"ZM_USAGE_RETENTION_DAYS": "7"}, backend=request.param, clock=lambda: NOW)
    alice = Caller("alice", client="test")
    memory_id = remember(
        app, alice, RememberRequest(content="Deploys go out on Thursdays", kind="fact", scope="personal")
    ).id  # type: ignore[arg-type]
    with system_tx(app.store, "test-setup", write=True) as tx:
        for days in range(0, 365, 10):
            at = NOW - timedelta(days=days, hours=1)
            for declared in (False, days % 20 == 0):
                tx.add_usage_event(
                    user_id="alice", tool="remember", client="test", outcome="ok", declared_supersede=declared, at=at
                )
            tx.add_surfacings("alice", [memory_id] * 12, at, session_id=f"s{days}", channel=Channel.RECALL)
    return app


def counts(app: App) -> dict[str, int]:
    with system_tx(app.store, "test") as tx:
        return {
            t: tx.count_rows(t) for t in ("usage_events", "surfacings", "audit", "usage_event_days", "surfacing_days")
        }


def test_zm_db_rollup_keeps_the_insights_and_the_reexamination_candidates(aged: App) -> None:
    before_insights = insights_for(aged, Caller("alice"))
    before_candidates = [m.id for m in candidates(aged, "alice")]
    before = counts(aged)
    rolled = run_in_process(["db", "rollup", "--json"], env={}, app=aged)
    assert rolled.exit_code == 0, rolled.stderr
    report = rolled.json()
    limits = retention.cutoffs(aged.settings, NOW)
    assert report["usage_events_before"] == limits.usage_events.isoformat() == (NOW - timedelta(days=7)).isoformat()
    assert report["surfacings_before"] == (NOW - timedelta(days=90)).isoformat()
    after = counts(aged)
    # Events every ten days: day 0 is kept, the other 36 days (and their declared twins) are rolled up.
    assert report["usage_events_rolled_up"] == before["usage_events"] - after["usage_events"] > 0
    assert report["surfacings_rolled_up"] == before["surfacings"] - after["surfacings"] == 12 * 28
    assert after["audit"] == before["audit"] + 1 and after["usage_event_days"] and after["surfacing_days"]
    assert insights_for(aged, Caller("alice")) == before_insights
    assert before_insights.supersede.total > 0
    assert [m.id for m in candidates(aged, "alice")] == before_candidates != []
    with system_tx(aged.store, "test") as tx:
        (audit,) = tx.audit_actions("retention.rollup")
    assert audit.actor == "operator" and audit.payload == report
    again = run_in_process(["db", "rollup"], env={}, app=aged)
    assert again.exit_code == 0
    assert again.stdout.startswith(
        "rolled up 0 surfacings older than 2026-04-01 and 0 usage events older than 2026-06-23"
    )


def test_the_scheduled_tick_rolls_up_too(aged: App) -> None:
    summary = run_tick(aged, 1)
    assert summary is not None
    assert summary["usage_events_rolled_up"] > 0 and summary["surfacings_rolled_up"] == 12 * 28
    with system_tx(aged.store, "test") as tx:
        assert [e.actor for e in tx.audit_actions("retention.rollup")] == ["scheduler"]


@pytest.mark.parametrize("value", ["0", "-3", "ninety", "1.5"])
def test_a_bad_retention_setting_is_refused(value: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    home = tmp_path_factory.mktemp("home")
    refused = run_in_process(["db", "rollup"], env={"ZM_HOME": str(home), "ZM_USAGE_RETENTION_DAYS": value})
    assert refused.exit_code == 1
    assert refused.stderr.startswith("validation_failed: ZM_USAGE_RETENTION_DAYS: expected a whole number of days")
    assert not (home / "zm.db").exists()


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_zm_db_rollup_run_as_a_subprocess_folds_old_rows_and_refuses_a_bad_setting(
    backend: str, make_app: Callable[..., App]
) -> None:
    """The binary, on the real clock: rows past their retention become per-day counts, recent ones stay;
    a bad ``ZM_USAGE_RETENTION_DAYS`` is refused with its prefix and changes nothing."""
    app = make_app({"ZM_USAGE_RETENTION_DAYS": "30"}, backend=backend)
    now = app.clock()
    memory_id = remember(
        app,
        Caller("alice", client="test"),
        RememberRequest(content="The backup job runs at night", kind="fact", scope="personal"),  # type: ignore[arg-type]
    ).id
    with system_tx(app.store, "test-setup", write=True) as tx:
        for days, events, surfaced in ((1, 2, 1), (100, 3, 0), (400, 0, 4)):
            at = now - timedelta(days=days)
            for _ in range(events):
                tx.add_usage_event(
                    user_id="alice", tool="recall", client="test", outcome="ok", declared_supersede=False, at=at
                )
            if surfaced:
                tx.add_surfacings("alice", [memory_id] * surfaced, at, session_id="s", channel=Channel.RECALL)
    env = {
        "ZM_HOME": str(app.settings.home),
        "ZM_DATABASE_URL": app.settings.database_url,
        "ZM_EMBEDDING_MODEL": "hash:512",
        "ZM_USAGE_RETENTION_DAYS": "30",
    }
    before = counts(app)
    refused = run_binary(["db", "rollup"], env={**env, "ZM_USAGE_RETENTION_DAYS": "0"})
    assert refused.exit_code == 1
    assert refused.stderr.startswith("validation_failed: ZM_USAGE_RETENTION_DAYS:"), refused.stderr
    assert counts(app) == before

    rolled = run_binary(["db", "rollup", "--json"], env=env)

    assert rolled.exit_code == 0, rolled.stderr
    assert rolled.json()["usage_events_rolled_up"] == 3 and rolled.json()["surfacings_rolled_up"] == 4
    after = counts(app)
    assert after["usage_events"] == before["usage_events"] - 3 and after["surfacings"] == before["surfacings"] - 4
    assert after["usage_event_days"] == 1 and after["surfacing_days"] == 1
    assert after["audit"] == before["audit"] + 1
    with system_tx(app.store, "test") as tx:
        by_day = tx.usage_by_day(since=now - timedelta(days=365), user_id="alice")
    assert sum(row["count"] for row in by_day if row["tool"] == "recall") == 5
