"""The extraction model's answer: the statements worth keeping in one transcript chunk, validated at the edge.

The same strict rules as a verdict (``judge.verdict``): an answer that is not
a JSON object, has an extra or a missing key, a kind outside the list, more
statements than ``MAX_STATEMENTS`` or an empty statement is rejected whole —
a model that bends the contract is not a model whose words should become
memories. A rejected answer extracts nothing; the chunk is tried again later.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, field_validator

from zero_memory.domain.memory import Kind
from zero_memory.judge.verdict import parse_answer, response_schema

EXTRACTION_SCHEMA_NAME: Final = "extracted_statements"
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


def parse_extraction(answer: str | dict[str, Any]) -> ExtractionAnswer:
    """A validated answer, or ``MalformedAnswer``/``InvalidAnswer`` (``judge.verdict``)."""
    return parse_answer(ExtractionAnswer, answer)


EXTRACTION_SCHEMA: Final = response_schema(ExtractionAnswer)
