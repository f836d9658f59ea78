"""What a provider sends: a system prompt and one user message, built from what the judge may see.

Each question (``judge.questions``) keeps its instructions in a text file
beside its module, so they can be read and reviewed as prose, and builds its
user message from the pieces here. A memory is presented with its kind, its
age and its content verbatim — and nothing else: no scope, no project, no id,
no rank. Which pair is worth judging and what a verdict leads to are decided
by deterministic code before and after the call, never by the prompt.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cache
from importlib import resources
from typing import Any

from zero_memory.domain.memory import Memory, age_days

ANSWER_MAX_TOKENS = 1_024
"""Room for a paragraph of rationale; a verdict needs far less."""


@dataclass(frozen=True, slots=True)
class Prompt:
    """Everything a provider needs for one call, whatever its transport."""

    system: str
    user: str
    schema_name: str
    schema: dict[str, Any]
    description: str
    max_tokens: int = ANSWER_MAX_TOKENS
    """Room for the answer, for providers that need a cap."""


@dataclass(frozen=True, slots=True)
class JudgedMemory:
    """One memory as the judge sees it."""

    kind: str
    age_days: float
    content: str

    @classmethod
    def of(cls, memory: Memory, now: datetime) -> JudgedMemory:
        return cls(kind=str(memory.kind), age_days=age_days(memory.created_at, now), content=memory.content)


@cache
def instructions(name: str) -> str:
    """The instructions in ``judge/questions/<name>``, read once."""
    return resources.files("zero_memory.judge.questions").joinpath(name).read_text(encoding="utf-8").strip()


def memory_block(title: str, memory: JudgedMemory) -> str:
    # The content goes in unchanged between tags: a memory may itself contain
    # Markdown fences, quotes or headings, and the judge must see it exactly.
    return (
        f"{title} — kind: {memory.kind}, written {describe_age(memory.age_days)}\n"
        f"<content>\n{memory.content}\n</content>"
    )


def describe_age(days: float) -> str:
    """A coarse, readable age: "today", "3 days ago", "5 months ago", "2 years ago"."""
    if days < 1:
        return "today"
    if days < 2:
        return "1 day ago"
    if days < 60:
        return f"{int(days)} days ago"
    if days < 730:
        return f"{round(days / 30.44)} months ago"
    return f"{round(days / 365.25)} years ago"
