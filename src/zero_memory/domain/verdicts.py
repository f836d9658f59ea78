"""What the judge answers, as pure types: a pair's verdict, portability, loop closure, extracted statements.

The judge (``zero_memory.judge``) asks the questions and validates a model's
reply into one of these at the edge; the pure decisions read them without
loading the judge: ``hygiene.decide`` routes a ``Verdict``, ``capture.route``
places an ``ExtractedStatement``, ``memory.gate`` applies a
``PortabilityCheck``.

Validation is strict on purpose. A confidence given as the string ``"0.9"``,
a verdict spelled ``"Duplicate"``, an extra key or a missing one are all
rejections, because a model that bends the output contract is not a model
whose verdict should retire a memory. The one leniency: a rationale longer
than ``MAX_RATIONALE_CHARS`` is cut, not rejected — its length says nothing
about whether the verdict is right, and the audit log caps payloads anyway.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Final

from pydantic import BaseModel, ConfigDict, Field, field_validator

from zero_memory.domain.memory import Kind

MAX_RATIONALE_CHARS: Final = 2_000


class Verdict(StrEnum):
    """How two memories relate; docs/spec/hygiene.md §2 gives the meaning of each."""

    DUPLICATE = "duplicate"
    A_SUPERSEDES_B = "a_supersedes_b"
    B_SUPERSEDES_A = "b_supersedes_a"
    CONTRADICTION = "contradiction"
    COMPLEMENTARY = "complementary"
    UNRELATED = "unrelated"

    @property
    def is_supersede(self) -> bool:
        return self in (Verdict.A_SUPERSEDES_B, Verdict.B_SUPERSEDES_A)


UNJUDGED: Final = "unjudged"
"""The queue's verdict for a pair parked in offer mode. No model ever produces it."""


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    rationale: str = Field(description="One short paragraph: why this verdict.")

    @field_validator("rationale", mode="after")
    @classmethod
    def _bounded(cls, value: str) -> str:
        value = value.strip()
        if len(value) > MAX_RATIONALE_CHARS:
            return value[: MAX_RATIONALE_CHARS - 1] + "…"
        return value


# Field order is the order a model writes the answer in (structured output
# follows the schema): the rationale first, so the verdict comes after the
# reasoning instead of being rationalised after the fact.
class HygieneVerdict(_Answer):
    verdict: Verdict = Field(description="Exactly one of the six verdicts.")
    confidence: float = Field(ge=0.0, le=1.0, description="Probability that the verdict is right, 0 to 1.")


class PortabilityVerdict(_Answer):
    portable: bool = Field(description="True only if the note holds outside the project it was written in.")
    confidence: float = Field(ge=0.0, le=1.0, description="Probability that the answer is right, 0 to 1.")


class LoopClosureVerdict(_Answer):
    closed: bool = Field(description="True only if the later note shows the task done or the question answered.")
    confidence: float = Field(ge=0.0, le=1.0, description="Probability that the answer is right, 0 to 1.")


class CodeChangeVerdict(_Answer):
    still_true: bool = Field(description="True only if the memory is still true of the code as it is after the change.")
    confidence: float = Field(ge=0.0, le=1.0, description="Probability that the answer is right, 0 to 1.")


PortabilityAnswer = tuple[bool, float, str]
"""(portable, confidence, rationale): a portability verdict as the gate and the audit read it."""

PortabilityCheck = Callable[[str, Kind], PortabilityAnswer | None]
"""(content, kind) -> (portable, confidence, rationale), or None when the judge gave no valid verdict."""


# -- the extraction model's answer: the statements worth keeping in one transcript chunk
#
# The same strict rules as a verdict: an answer with an extra or a missing key,
# a kind outside the list, more statements than ``MAX_STATEMENTS`` or an empty
# statement is rejected whole — a model that bends the contract is not a model
# whose words should become memories. A rejected answer extracts nothing; the
# chunk is tried again later.

MAX_STATEMENTS: Final = 20
"""Per chunk: a chunk that seems to hold more is a chunk the model did not distil."""
MAX_STATEMENT_CHARS: Final = 1_500
"""A memory works best as one statement under this length (the write path's length directive)."""


class ScopeHint(StrEnum):
    """Where the model thinks a statement belongs; ``capture.route`` decides where it goes."""

    PROJECT = "project"
    PERSONAL = "personal"


class ExtractedStatement(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    content: str = Field(
        min_length=1,
        max_length=MAX_STATEMENT_CHARS,
        description="One self-contained statement, understandable without the conversation.",
    )
    kind: Kind = Field(description="What kind of memory the statement is.")
    scope_hint: ScopeHint = Field(
        description='"personal" for a statement about the user themself (a preference, a habit); '
        '"project" for everything else.'
    )

    @field_validator("content", mode="after")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("a statement must not be blank")
        return value


class ExtractionAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    statements: list[ExtractedStatement] = Field(
        max_length=MAX_STATEMENTS,
        description=f"At most {MAX_STATEMENTS}; an empty list when the excerpt holds nothing worth keeping.",
    )
