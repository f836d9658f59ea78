"""Which statements worth keeping does a transcript chunk hold? The capture stream's question.

Answered with an ``ExtractionAnswer`` by the extraction model
(``ZM_EXTRACT_MODEL``, else the fast model), under the judge's fail-closed
contract: a rejected answer extracts nothing and the chunk is tried again
later. The chunk goes into the user message verbatim between tags, as data:
the instructions (``extraction_prompt.txt``) tell the model never to follow
what it says.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from zero_memory.domain.verdicts import ExtractionAnswer
from zero_memory.judge.parse import parse_answer, response_schema
from zero_memory.judge.prompt import Prompt, instructions
from zero_memory.judge.question import Purpose, Tier

SCHEMA_NAME: Final = "extracted_statements"
SCHEMA: Final = response_schema(ExtractionAnswer)
MAX_TOKENS: Final = 8_192
"""Twenty statements of up to 1,500 characters each, with room to spare."""


@dataclass(frozen=True, slots=True)
class ExtractionRequest:
    """Which statements worth keeping does this transcript chunk hold? Answered by the extraction model."""

    transcript: str
    purpose: Purpose = Purpose.EXTRACT

    @property
    def tier(self) -> Tier:
        return Tier.EXTRACTION

    def prompt(self) -> Prompt:
        return Prompt(
            system=instructions("extraction_prompt.txt"),
            user=message(self.transcript),
            schema_name=SCHEMA_NAME,
            schema=SCHEMA,
            description="Record the statements worth keeping from the conversation excerpt.",
            max_tokens=MAX_TOKENS,
        )

    def parse(self, raw: str | dict[str, Any]) -> ExtractionAnswer:
        return parse_answer(ExtractionAnswer, raw)

    def fake_answer(self, scripted: object) -> ExtractionAnswer:
        """An ``ExtractionAnswer``, or a list of statements as dicts."""
        if isinstance(scripted, list):
            return ExtractionAnswer.model_validate_json(json.dumps({"statements": scripted}))
        if isinstance(scripted, ExtractionAnswer):
            return scripted
        raise TypeError(f"FakeJudge: {scripted!r} does not answer an extraction request")


def message(transcript: str) -> str:
    return (
        f"<transcript>\n{transcript}\n</transcript>\n\n"
        "Which statements from this excerpt are worth keeping for later sessions?"
    )
