from __future__ import annotations

import dataclasses
import re
from datetime import UTC, datetime, timedelta

import pytest

from zero_memory.domain.memory import AuthorKind, Kind, Memory, Rank
from zero_memory.domain.verdicts import Verdict
from zero_memory.judge.prompt import JudgedMemory, describe_age
from zero_memory.judge.questions.pair import SCHEMA as HYGIENE_SCHEMA
from zero_memory.judge.questions.pair import PairRequest
from zero_memory.judge.questions.portability import SCHEMA as PORTABILITY_SCHEMA
from zero_memory.judge.questions.portability import PortabilityRequest

NOW = datetime(2025, 6, 1, tzinfo=UTC)

TRICKY = (
    'Gotcha: in `conftest.py`\n```python\n@pytest.fixture(scope="session")\n```\n'
    '  leading spaces, <content> tags, "quotes" and ünïcödé — kept exactly.\n'
)


def memory(content: str, *, scope: str = "proj.u_ana.billing", days: float = 3) -> Memory:
    return Memory(
        id="mem_01J0000000000000000000000",
        owner="u_ana",
        scope=scope,
        kind=Kind.GOTCHA,
        content=content,
        author_kind=AuthorKind.AGENT,
        agent_name="claude-code",
        rank=Rank.AGENT,
        source={"imported_from": "/home/ana/src/billing"},
        created_at=NOW - timedelta(days=days),
        updated_at=NOW,
    )


def test_the_pair_is_presented_as_memory_a_then_memory_b_with_kind_and_age() -> None:
    a = JudgedMemory("gotcha", 40, "first")
    b = JudgedMemory("decision", 0.2, "second")
    user = PairRequest(a, b).prompt().user
    assert user.index("Memory A — kind: gotcha, written 40 days ago") < user.index(
        "Memory B — kind: decision, written today"
    )
    assert user.index("first") < user.index("second")


def test_content_reaches_the_judge_verbatim() -> None:
    user = PairRequest(JudgedMemory("gotcha", 1, TRICKY), JudgedMemory("fact", 1, "x")).prompt().user
    assert f"<content>\n{TRICKY}\n</content>" in user


def test_a_judged_memory_carries_kind_age_and_content_only() -> None:
    assert [f.name for f in dataclasses.fields(JudgedMemory)] == ["kind", "age_days", "content"]


def test_no_scope_project_owner_or_id_reaches_the_prompt() -> None:
    a = JudgedMemory.of(memory("Stripe retries webhooks for 3 days."), NOW)
    b = JudgedMemory.of(memory("Webhook handlers must be idempotent.", scope="user.u_ana.core"), NOW)
    prompt = PairRequest(a, b).prompt()
    text = prompt.system + prompt.user
    for leak in ("proj.", "billing", "user.u_ana", "core", "u_ana", "mem_", "claude-code", "/home/ana"):
        assert leak not in text, leak


def test_judged_memory_of_a_memory_takes_its_kind_age_and_content() -> None:
    judged = JudgedMemory.of(memory("text", days=12.5), NOW)
    assert judged == JudgedMemory("gotcha", 12.5, "text")


def test_the_instructions_define_all_six_verdicts() -> None:
    system = PairRequest(JudgedMemory("fact", 1, "a"), JudgedMemory("fact", 1, "b")).prompt().system
    for verdict in Verdict:
        assert re.search(rf"^{verdict}$", system, re.MULTILINE), verdict


def test_the_instructions_carry_the_coverage_clause_and_the_doubt_rules() -> None:
    system = PairRequest(JudgedMemory("fact", 1, "a"), JudgedMemory("fact", 1, "b")).prompt().system
    assert "covers every actionable specific" in system
    for specific in ("step", "command", "configuration"):
        assert specific in system
    assert "This is the verdict when in doubt." in system
    assert "merely share a domain" in system
    assert "broad summary" in system


def test_the_instructions_leave_deterministic_rules_to_the_code() -> None:
    """Ranks, scopes, protection and confidence gates are decided outside the model."""
    prompts = [
        PairRequest(JudgedMemory("fact", 1, "a"), JudgedMemory("fact", 1, "b")).prompt(),
        PortabilityRequest(JudgedMemory("fact", 1, "a")).prompt(),
    ]
    for prompt in prompts:
        lowered = prompt.system.lower()
        for rule_word in ("rank", "provisional", "protected", "scope", "0.9", "0.95", "0.7", "threshold"):
            assert rule_word not in lowered, rule_word


def test_a_pair_prompt_asks_for_the_hygiene_verdict_schema() -> None:
    prompt = PairRequest(JudgedMemory("fact", 1, "a"), JudgedMemory("fact", 1, "b")).prompt()
    assert (prompt.schema_name, prompt.schema) == ("hygiene_verdict", HYGIENE_SCHEMA)


def test_a_portability_prompt_shows_one_memory_and_asks_for_the_portability_schema() -> None:
    prompt = PortabilityRequest(JudgedMemory("reference", 100, TRICKY)).prompt()
    assert (prompt.schema_name, prompt.schema) == ("portability_verdict", PORTABILITY_SCHEMA)
    assert "Memory — kind: reference, written 3 months ago" in prompt.user
    assert f"<content>\n{TRICKY}\n</content>" in prompt.user
    assert "Memory A" not in prompt.user
    assert "not portable" in prompt.system


@pytest.mark.parametrize(
    ("days", "text"),
    [
        (0, "today"),
        (0.9, "today"),
        (1.5, "1 day ago"),
        (2, "2 days ago"),
        (59.9, "59 days ago"),
        (60, "2 months ago"),
        (400, "13 months ago"),
        (730, "2 years ago"),
        (3650, "10 years ago"),
    ],
)
def test_ages_read_coarsely(days: float, text: str) -> None:
    assert describe_age(days) == text
