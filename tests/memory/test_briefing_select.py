"""The briefing's select step, alone: a pure function of what was gathered, table-driven."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from zero_memory.domain.memory import AuthorKind, Kind, Memory, Rank
from zero_memory.memory.briefing import Facts, select
from zero_memory.memory.briefing_text import TRIAGE_POINTER
from zero_memory.memory.targets import SessionState

NOW = datetime(2026, 6, 1, tzinfo=UTC)
BUDGET = 8_000


def memory(id: str, kind: Kind = Kind.DECISION, days: float = 0.0, content: str | None = None) -> Memory:
    at = NOW - timedelta(days=days)
    return Memory(
        id=id,
        owner="alice",
        scope="project.alice.app",
        kind=kind,
        content=content or f"memory {id}",
        author_kind=AuthorKind.AGENT,
        agent_name="test",
        rank=Rank.AGENT,
        source={},
        created_at=at,
        updated_at=at,
    )


EMPTY = Facts(
    session=SessionState("s1", "project.alice.app"),
    project="project.alice.app",
    pinned=[],
    conventions=[],
    loops=[],
    decisions=[],
    relevant=None,
    usage={},
    pending=0,
    drifted=[],
)
RULE, OLD_RULE, USED_RULE = (memory(i, Kind.CONVENTION, days=d) for i, d in (("r1", 1), ("r2", 30), ("r3", 60)))
LOOP = memory("loop", Kind.TASK, days=3)
D_NEW, D_OLD, D_USED = (memory(i, days=d) for i, d in (("dnew", 1), ("dold", 90), ("dused", 40)))


def section(briefing: object, name: str) -> list[str]:
    return [item.id for item in getattr(briefing, name).items]


CASES = [
    pytest.param({}, "rules", [], id="nothing gathered, nothing shown"),
    pytest.param(
        {"conventions": [OLD_RULE, RULE, USED_RULE], "usage": {"r3": 4}},
        "rules",
        ["r3", "r1", "r2"],
        id="rules: most used first, then newest",
    ),
    pytest.param(
        {"pinned": [OLD_RULE], "conventions": [RULE, OLD_RULE]}, "rules", ["r2", "r1"], id="rules: pinned first, once"
    ),
    pytest.param(
        {"decisions": [D_NEW, D_USED, D_OLD], "usage": {"dused": 2}},
        "memories",
        ["dused", "dnew", "dold"],
        id="no topic: most used and most recent, alternately",
    ),
    pytest.param(
        {"decisions": [D_NEW, D_OLD], "loops": [replace(D_NEW, kind=Kind.TASK)]},
        "memories",
        ["dold"],
        id="no topic: what a section above shows is not repeated",
    ),
    pytest.param(
        {"relevant": [D_OLD, D_NEW], "decisions": [D_USED]},
        "memories",
        ["dold", "dnew"],
        id="a topic: recall's order, not the topicless pool",
    ),
    pytest.param({"loops": [LOOP]}, "open_loops", ["loop"], id="open loops listed"),
    pytest.param({"drifted": [D_NEW, D_OLD]}, "code_changed", ["dold", "dnew"], id="code changed: oldest memory first"),
]


@pytest.mark.parametrize(("facts", "name", "expected"), CASES)
def test_select(facts: dict[str, object], name: str, expected: list[str]) -> None:
    briefing = select(replace(EMPTY, **facts), NOW, topic=None, limit=10, budget=BUDGET)
    assert section(briefing, name) == expected


def test_the_limit_cuts_the_memories_section() -> None:
    decisions = [memory(f"d{i}", days=i) for i in range(8)]
    briefing = select(replace(EMPTY, decisions=decisions), NOW, topic=None, limit=3, budget=BUDGET)
    assert section(briefing, "memories") == ["d0", "d1", "d2"]


def test_pending_reviews_point_to_triage_only_when_some_wait() -> None:
    assert select(EMPTY, NOW, topic=None, limit=10, budget=BUDGET).pending_reviews.pointer is None
    waiting = select(replace(EMPTY, pending=3), NOW, topic="t", limit=10, budget=BUDGET)
    assert (waiting.pending_reviews.count, waiting.pending_reviews.pointer, waiting.topic) == (3, TRIAGE_POINTER, "t")


def test_a_small_budget_omits_items_and_counts_them() -> None:
    long = [memory(f"d{i}", days=i, content="word " * 300) for i in range(10)]
    briefing = select(replace(EMPTY, decisions=long), NOW, topic=None, limit=10, budget=2_000)
    shown = section(briefing, "memories")
    assert len(shown) < 10
    assert briefing.memories.omitted == 10 - len(shown)
