"""The retro pass: through ``zm`` (cursor, --max, --after, --offer, no progress bar off a terminal)
and as a service with the fake judge (it never auto-resolves)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from tests.cli.harness import Zm
from tests.memory.helpers import write
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.hygiene.retro import parse_cursor, retro
from zero_memory.judge.fake import FakeJudge
from zero_memory.store import SYSTEM
from zero_memory.store.ports.review import DisputeQuery

PAIRS = [
    ("The staging database is green", "The staging database is blue"),
    ("The cache TTL is five minutes", "The cache TTL is thirty minutes"),
    ("Deploys happen on Tuesdays", "Deploys happen on Thursdays"),
]


@pytest.fixture
def seeded(make_app: Callable[..., App], zm: Zm) -> Zm:
    """A data directory holding the pairs, and ``zm`` pointed at it as alice."""
    app = make_app()
    alice = Caller("alice", client="test")
    for first, second in PAIRS:
        for text in (first, second):
            write(app, alice, text)
    return Zm({**zm.env, "ZM_HOME": str(app.settings.home), "ZM_USER": "alice"})


def pending(zm: Zm) -> list[dict[str, object]]:
    return zm("conflicts", "list", "--json").json()["conflicts"]  # type: ignore[no-any-return]


def test_retro_batches_resume_from_the_printed_cursor_and_stay_idempotent(seeded: Zm) -> None:
    zm = seeded
    first = zm("hygiene", "retro", "--max", "1", "--offer", "--json")
    assert first.exit_code == 0, first.stderr
    report = first.json()
    assert report["queued"] == 1 and report["done"] is False
    parse_cursor(report["cursor"])
    assert "\x1b[" not in first.stdout + first.stderr  # no progress bar off a terminal
    rows = pending(zm)
    assert len(rows) == 1 and rows[0]["verdict"] == "unjudged"
    assert rows[0]["confidence"] is None and rows[0]["rationale"] is None

    cursor = report["cursor"]
    while True:
        batch = zm("hygiene", "retro", "--max", "1", "--offer", "--after", cursor, "--json").json()
        assert batch["queued"] <= 1
        if batch["done"]:
            break
        cursor = batch["cursor"]
    assert len(pending(zm)) == len(PAIRS)

    again = zm("hygiene", "retro", "--max", "10", "--offer", "--json").json()
    assert again["queued"] == 0 and again["done"] is True
    assert len(pending(zm)) == len(PAIRS)


def test_retro_prints_the_resume_command_for_people(seeded: Zm) -> None:
    zm = seeded
    result = zm("hygiene", "retro", "--max", "1", "--offer")
    assert result.exit_code == 0
    cursor_line = next(line for line in result.stdout.splitlines() if line.startswith("cursor: "))
    parse_cursor(cursor_line.removeprefix("cursor: "))
    assert "zm hygiene retro --max 1 --after " in result.stdout
    refused = zm("hygiene", "retro", "--max", "1", "--after", "yesterday")
    assert refused.exit_code == 1 and refused.stderr.startswith("validation_failed: after:")


def test_retro_with_a_judge_never_auto_resolves(make_app: Callable[..., App]) -> None:
    judge = FakeJudge(default=("duplicate", 0.99))
    app = make_app(judge_factory=lambda owner, run_id: judge)
    alice = Caller("alice", client="test")
    written = [write(app, alice, text).id for pair in PAIRS for text in pair]
    report = retro(app, "alice", max_new_rows=50, started_by="alice")
    assert report.done and report.summary["queued"] == len(PAIRS)
    assert report.summary["auto_resolved"] == 0
    with app.store.tx() as tx:
        assert all(m.live for m in tx.get_memories(written, SYSTEM).values())
        assert tx.count_disputes(DisputeQuery(owner="alice")) == len(PAIRS)


def test_retro_offer_makes_no_judge_call(make_app: Callable[..., App]) -> None:
    judge = FakeJudge(default=("duplicate", 0.99))
    app = make_app(judge_factory=lambda owner, run_id: judge)
    alice = Caller("alice", client="test")
    for pair in PAIRS:
        for text in pair:
            write(app, alice, text)
    report = retro(app, "alice", max_new_rows=50, offer=True, started_by="alice")
    assert judge.requests == []
    assert report.summary["queued"] == len(PAIRS)


def test_after_a_bare_timestamp_skips_everything_older(seeded: Zm) -> None:
    zm = seeded
    newest = max(m["created_at"] for m in map(json.loads, zm("export").stdout.splitlines()))
    result = zm("hygiene", "retro", "--max", "5", "--offer", "--after", newest, "--json").json()
    assert result["subjects"] == 0 and result["done"] is True
