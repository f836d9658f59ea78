"""The briefing service: what build_context puts in each section, in what order, within its budget."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from tests.hygiene.helpers import Clock
from tests.memory.helpers import write
from zero_memory.access.caller import Caller
from zero_memory.access.projects import create_project, grant
from zero_memory.app import App
from zero_memory.domain.memory import Kind
from zero_memory.domain.records import Channel
from zero_memory.errors import ZMError
from zero_memory.memory import lifecycle, pins
from zero_memory.memory.briefing import build_context
from zero_memory.memory.briefing_text import ITEM_CHARS, cut, fit, render
from zero_memory.memory.loops import list_loops
from zero_memory.memory.recall import recall
from zero_memory.store import system_tx

REPO = "/work/repos/payments"


@pytest.mark.parametrize(
    ("costs", "room", "expected"),
    [
        ([[], [], []], 1000, [0, 0, 0]),
        ([[100] * 3, [100] * 3, [100] * 3], 10_000, [3, 3, 3]),
        # each section's share first: 300 / 350 / 350 of 1000
        ([[100] * 10, [100] * 10, [100] * 10], 1000, [4, 3, 3]),
        # what one section leaves goes to the others, in order
        ([[100] * 10, [], [100] * 10], 1000, [7, 0, 3]),
        ([[], [100] * 10, []], 1000, [0, 10, 0]),
        # a prefix only: a big item stops its section, later small ones never jump ahead of it
        ([[50, 5000, 50], [100], [100]], 1000, [1, 1, 1]),
        ([[100]], 0, None),
    ],
)
def test_fit_takes_each_sections_share_then_hands_on_what_is_left(
    costs: list[list[int]], room: int, expected: list[int] | None
) -> None:
    if expected is None:
        with pytest.raises(ValueError):
            fit(costs, room)
        return
    assert fit(costs, room) == expected


def test_fit_never_takes_more_than_the_room() -> None:
    costs = [[37, 80, 12, 400], [90, 90, 90, 90, 90], [250, 10, 10]]
    for room in range(0, 2000, 7):
        counts = fit(costs, room)
        taken = sum(sum(section[:n]) for section, n in zip(costs, counts, strict=True))
        assert taken <= room


def test_an_items_flags_appear_in_its_json_only_when_set(app: App, alice: Caller) -> None:
    rule = write(app, alice, "Squash merge feature branches", "convention", scope="personal")
    pins.pin(app, alice, rule.id)
    write(app, alice, "Prefer tabs", "preference", scope="personal")
    write(app, alice, "Move CI to the new runners", "task", scope="personal")
    write(app, alice, "A gotcha " + "about the runners " * 60, "gotcha", scope="personal")
    briefing = json.loads(build_context(app, alice).model_dump_json())
    sections = ("rules", "open_loops", "memories")
    items = {item["content"][:12]: item for name in sections for item in briefing[name]["items"]}
    assert set(items["Squash merge"]) == {"id", "kind", "scope", "age_days", "content", "pinned"}
    assert set(items["Prefer tabs"]) == {"id", "kind", "scope", "age_days", "content"}
    assert set(items["Move CI to t"]) == {"id", "kind", "scope", "age_days", "content", "open_days"}
    assert set(items["A gotcha abo"]) == {"id", "kind", "scope", "age_days", "content", "truncated"}
    assert briefing["pending_reviews"] == {"count": 0}


def test_a_long_memory_is_cut_and_marked() -> None:
    text, truncated = cut("x" * (ITEM_CHARS + 50))
    assert truncated and len(text) == ITEM_CHARS and text.endswith("…")
    assert cut("short") == ("short", False)


def test_a_briefing_has_every_section_in_its_order(app: App, alice: Caller) -> None:
    first = write(app, alice, "We use tabs in the Makefile, never spaces", "convention", project_hint=REPO)
    second = write(app, alice, "Money is stored as integer cents", "convention", project_hint=REPO)
    rule = write(app, alice, "Ask before running database migrations", "preference", scope="personal")
    pinned = write(app, alice, "Payments go through the ledger service only", "decision", project_hint=REPO)
    old_task = write(app, alice, "Port the refund job to the new queue", "task", project_hint=REPO)
    question = write(app, alice, "Should refunds be idempotent per order?", "open-question", scope="personal")
    gotcha = write(app, alice, "The sandbox rejects amounts under 50 cents", "gotcha", project_hint=REPO)
    pins.pin(app, alice, pinned.id)
    recall(app, alice, "integer cents money", project_hint=REPO)  # second convention is now the most used

    briefing = build_context(app, alice, project_hint=REPO, session_id="s-1")

    assert briefing.project == briefing.session.attached_project == first.scope
    rules = [i.id for i in briefing.rules.items]
    assert rules[0] == pinned.id and briefing.rules.items[0].pinned
    assert rules.index(second.id) < rules.index(first.id)
    assert rule.id in rules
    assert [i.id for i in briefing.open_loops.items] == [old_task.id, question.id]
    assert all(i.open_days is not None for i in briefing.open_loops.items)
    assert gotcha.id in [i.id for i in briefing.memories.items]
    assert pinned.id not in [i.id for i in briefing.memories.items]
    assert briefing.pending_reviews.count == 0 and briefing.pending_reviews.pointer is None
    text = render(briefing)
    assert len(text) <= briefing.budget_chars
    for heading in ("## Rules", "## Open loops", "## Memories", "## Pending reviews"):
        assert heading in text


def test_a_topic_briefing_recalls_for_the_topic_and_records_it_as_a_briefing(app: App, alice: Caller) -> None:
    write(app, alice, "The ledger service exposes gRPC on port 7443", "fact", project_hint=REPO)
    wanted = write(app, alice, "Refund webhooks are retried five times by the provider", "gotcha", project_hint=REPO)
    briefing = build_context(app, alice, project_hint=REPO, topic="refund webhook retries")
    assert briefing.memories.items[0].id == wanted.id
    with system_tx(app.store, "test") as tx:
        served = tx.surfacings_of([wanted.id], since=datetime(2000, 1, 1, tzinfo=UTC))
        reinforcing = tx.sessions_served([wanted.id], since=datetime(2000, 1, 1, tzinfo=UTC), channel=Channel.RECALL)
    assert served == {wanted.id: 1}
    assert reinforcing == {}


def test_pending_reviews_point_at_the_triage_prompt(app: App, alice: Caller) -> None:
    from zero_memory.conflicts.challenge import challenge

    doubted = write(app, alice, "The staging cluster has three nodes", "fact", scope="personal")
    challenge(app, alice, doubted.id, "It was scaled to five last week")
    briefing = build_context(app, alice)
    assert briefing.pending_reviews.count == 1
    assert "triage" in (briefing.pending_reviews.pointer or "")
    assert "1 review-queue row waits for you" in render(briefing)


def test_only_scopes_the_caller_can_see(app: App, alice: Caller, bob: Caller) -> None:
    theirs = write(app, bob, "Bob's secret plan for the payments repo", "task", project_hint=REPO)
    personal = write(app, bob, "Bob prefers dark mode", "preference", scope="personal")
    mine = build_context(app, alice, project_hint=REPO)
    ids = {i.id for s in (mine.rules, mine.open_loops, mine.memories) for i in s.items}
    assert theirs.id not in ids and personal.id not in ids
    assert mine.project is not None and mine.project.startswith("proj.alice.")
    with system_tx(app.store, "test", write=True) as tx:
        shared = create_project(tx, "bob", "shared-payments")
        grant(tx, "bob", shared.scope, "alice", "reader")
    task = write(app, bob, "Rotate the shared signing key", "task", scope=shared.scope)
    read = build_context(app, alice, project_hint=shared.scope)
    assert read.project == shared.scope
    assert [i.id for i in read.open_loops.items] == [task.id]


def test_the_briefing_stays_within_its_budget_and_counts_what_it_left_out(
    make_app: Callable[..., App], alice: Caller
) -> None:
    app = make_app({"ZM_BRIEFING_CHARS": "2000"})
    for n in range(30):
        write(
            app,
            alice,
            f"Task number {n}: " + "migrate one more service to the new queue " * 5,
            "task",
            scope="personal",
        )
        write(
            app, alice, f"Convention {n}: " + "name every queue after its producer " * 4, "convention", scope="personal"
        )
    briefing = build_context(app, alice)
    text = render(briefing)
    assert len(text) <= 2000 == briefing.budget_chars
    # The JSON too: what Claude Code and Codex hand the model instead of the text.
    assert len(briefing.model_dump_json()) <= 2000
    assert briefing.rules.items and briefing.open_loops.items
    assert briefing.rules.omitted + len(briefing.rules.items) == 30
    assert briefing.open_loops.omitted + len(briefing.open_loops.items) == 30
    assert f"({briefing.open_loops.omitted} more not shown" in text


def test_a_sixty_day_old_task_is_in_the_briefing_and_the_loop_list_until_closed(
    make_app: Callable[..., App], alice: Caller
) -> None:
    clock = Clock()
    app = make_app(clock=clock)
    task = write(app, alice, "Write the runbook for the refund queue", "task", project_hint=REPO)
    for n in range(20):
        write(app, alice, f"Fresh note {n} about the refund queue runbook", "fact", project_hint=REPO)
    clock.advance(days=60)

    briefing = build_context(app, alice, project_hint=REPO)
    loop = next(i for i in briefing.open_loops.items if i.id == task.id)
    assert loop.open_days is not None and loop.open_days >= 60
    assert [lp.id for lp in list_loops(app, alice).loops] == [task.id]
    found = recall(app, alice, "Write the runbook for the refund queue", project_hint=REPO, limit=10)
    assert task.id in [h.id for h in found.hits]

    lifecycle.close_loop(app, alice, task.id, "written")
    closed = build_context(app, alice, project_hint=REPO)
    assert task.id not in [i.id for i in closed.open_loops.items]
    assert list_loops(app, alice).loops == []
    gone = list_loops(app, alice, status="closed").loops
    assert [lp.id for lp in gone] == [task.id] and gone[0].note == "written" and gone[0].closed_by == "alice"


def test_bad_input_is_refused(app: App, alice: Caller) -> None:
    with pytest.raises(ZMError, match=r"^validation_failed: limit"):
        build_context(app, alice, limit=0)
    with pytest.raises(ZMError, match=r"^validation_failed: topic"):
        build_context(app, alice, topic="x" * 5000)


def test_pins_are_audited_and_reversible(app: App, alice: Caller, bob: Caller) -> None:
    rule = write(app, alice, "Never deploy on Fridays", "convention", scope="personal")
    assert pins.pin(app, alice, rule.id).changed
    assert not pins.pin(app, alice, rule.id).changed
    assert lifecycle.get_memory(app, alice, rule.id).memory.pinned
    assert pins.unpin(app, alice, rule.id).changed
    assert not pins.unpin(app, alice, rule.id).changed
    shown = lifecycle.get_memory(app, alice, rule.id)
    assert not shown.memory.pinned
    assert [a.action for a in shown.audit if a.action in ("pin", "unpin")] == ["unpin", "pin"]  # newest first
    with pytest.raises(ZMError, match=r"^not_found:"):
        pins.pin(app, bob, rule.id)
    lifecycle.forget(app, alice, rule.id)
    with pytest.raises(ZMError, match=r"^validation_failed: id: .* is not live"):
        pins.pin(app, alice, rule.id)


def test_a_retired_pinned_rule_leaves_the_briefing_and_returns_when_restored(app: App, alice: Caller) -> None:
    rule = write(app, alice, "Squash commits before merging", "convention", scope="personal")
    pins.pin(app, alice, rule.id)
    lifecycle.forget(app, alice, rule.id)
    assert rule.id not in [i.id for i in build_context(app, alice).rules.items]
    lifecycle.restore_memory(app, alice, rule.id)
    assert build_context(app, alice).rules.items[0].id == rule.id


def test_writes_after_a_briefing_go_to_its_project(app: App, alice: Caller) -> None:
    briefing = build_context(app, alice, project_hint=REPO, session_id="s-9")
    later = write(app, alice, "The refund queue is called refunds.v2", "fact", scope=None, session_id="s-9")
    assert later.scope == briefing.session.attached_project


def test_ages_are_reported(make_app: Callable[..., App], alice: Caller) -> None:
    clock = Clock()
    app = make_app(clock=clock)
    write(app, alice, "Old convention about tabs", "convention", scope="personal")
    clock.advance(days=3)
    item = build_context(app, alice).rules.items[0]
    assert item.age_days == pytest.approx(3, abs=0.1)
    assert item.kind is Kind.CONVENTION and item.scope == "user.alice"
    assert timedelta(days=item.age_days) >= timedelta(days=2.9)


def test_a_briefing_writes_only_to_settle_its_hint_once_per_session(
    app: App, alice: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(app, alice, "Money is stored as integer cents", "convention", project_hint=REPO)
    writes: list[bool] = []
    tx = app.store.tx

    def counting_tx(*args: object, write: bool = False, **kwargs: object) -> object:
        writes.append(write)
        return tx(*args, write=write, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(app.store, "tx", counting_tx)
    monkeypatch.setattr(app.telemetry, "record", lambda row: None)  # its surfacings: counted elsewhere
    first = build_context(app, alice, project_hint=REPO, session_id="s-brief")
    # One write: the session attached to the project, which the briefing then reads.
    assert writes.count(True) == 1
    assert first.project is not None and first.session.attached_project == first.project
    assert [i.content for i in first.rules.items] == ["Money is stored as integer cents"]
    writes.clear()
    again = build_context(app, alice, project_hint=REPO, session_id="s-brief")
    assert True not in writes
    assert again.project == first.project and [i.content for i in again.rules.items] == [
        "Money is stored as integer cents"
    ]
    writes.clear()
    new = build_context(app, alice, project_hint="/srv/a-new-repo", session_id="s-new")
    # A hint naming no project yet creates it (and attaches the session) before the read.
    assert writes.count(True) == 1
    assert new.project == "proj.alice.a-new-repo" and new.session.attached_project == new.project
