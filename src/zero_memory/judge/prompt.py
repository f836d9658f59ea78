"""The messages a provider sends: a system prompt and one user message.

The instructions live in ``hygiene_prompt.txt``, ``portability_prompt.txt``
and ``extraction_prompt.txt`` beside this module, so they can be read and
reviewed as prose. The user
message presents each memory as "Memory A" / "Memory B" with its kind, its age
and its content verbatim — and nothing else: no scope, no project, no id, no
rank. Which pair is worth judging and what a verdict leads to are decided by
deterministic code before and after the call, never by the prompt. An
extraction request presents its transcript chunk verbatim between tags, as
data: the instructions tell the model never to follow what it says.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from zero_memory.judge.base import ExtractionRequest, JudgedMemory, JudgeRequest, LoopClosureRequest, PairRequest
from zero_memory.judge.extraction import EXTRACTION_SCHEMA, EXTRACTION_SCHEMA_NAME
from zero_memory.judge.verdict import (
    HYGIENE_SCHEMA,
    HYGIENE_SCHEMA_NAME,
    LOOP_CLOSURE_SCHEMA,
    LOOP_CLOSURE_SCHEMA_NAME,
    PORTABILITY_SCHEMA,
    PORTABILITY_SCHEMA_NAME,
)

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


@cache
def _instructions(name: str) -> str:
    return resources.files("zero_memory.judge").joinpath(name).read_text(encoding="utf-8").strip()


EXTRACTION_MAX_TOKENS = 8_192
"""Twenty statements of up to 1,500 characters each, with room to spare."""


def build_prompt(request: JudgeRequest) -> Prompt:
    if isinstance(request, ExtractionRequest):
        return Prompt(
            system=_instructions("extraction_prompt.txt"),
            user=extraction_message(request.transcript),
            schema_name=EXTRACTION_SCHEMA_NAME,
            schema=EXTRACTION_SCHEMA,
            description="Record the statements worth keeping from the conversation excerpt.",
            max_tokens=EXTRACTION_MAX_TOKENS,
        )
    if isinstance(request, PairRequest):
        return Prompt(
            system=_instructions("hygiene_prompt.txt"),
            user=pair_message(request.a, request.b),
            schema_name=HYGIENE_SCHEMA_NAME,
            schema=HYGIENE_SCHEMA,
            description="Record how Memory A and Memory B relate.",
        )
    if isinstance(request, LoopClosureRequest):
        return Prompt(
            system=_instructions("loop_closure_prompt.txt"),
            user=loop_closure_message(request.loop, request.evidence),
            schema_name=LOOP_CLOSURE_SCHEMA_NAME,
            schema=LOOP_CLOSURE_SCHEMA,
            description="Record whether the later memory closes the open loop.",
        )
    return Prompt(
        system=_instructions("portability_prompt.txt"),
        user=portability_message(request.memory),
        schema_name=PORTABILITY_SCHEMA_NAME,
        schema=PORTABILITY_SCHEMA,
        description="Record whether the memory is portable.",
    )


def pair_message(a: JudgedMemory, b: JudgedMemory) -> str:
    return "\n\n".join(
        [
            _memory_block("Memory A", a),
            _memory_block("Memory B", b),
            "How do Memory A and Memory B relate?",
        ]
    )


def portability_message(memory: JudgedMemory) -> str:
    return "\n\n".join([_memory_block("Memory", memory), "Is this memory portable?"])


def extraction_message(transcript: str) -> str:
    return (
        f"<transcript>\n{transcript}\n</transcript>\n\n"
        "Which statements from this excerpt are worth keeping for later sessions?"
    )


def loop_closure_message(loop: JudgedMemory, evidence: JudgedMemory) -> str:
    if loop.kind == "task":
        question = "Does the later memory show this task done?"
    else:
        question = "Does the later memory answer this question?"
    return "\n\n".join([_memory_block("Open loop", loop), _memory_block("Later memory", evidence), question])


def _memory_block(title: str, memory: JudgedMemory) -> str:
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
