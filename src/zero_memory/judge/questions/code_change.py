"""Is a memory still true after the code it is anchored to changed? Answered with a ``CodeChangeVerdict``.

Asked by verification (``memory.verification``) for an anchor whose region changed, purpose ``code_change``,
through the memory owner's judge (their key, their ledger rows): the adjudication model, or the fast one for
a provisional memory. ``ask`` gives ``(still_true, confidence, rationale)`` or None, and None always means
"not shown still true": a timeout, a refusal, a malformed answer. The confidence floor is the caller's to
apply. The instructions are ``code_change_prompt.txt``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from zero_memory.domain.memory import Memory, Rank
from zero_memory.domain.verdicts import CodeChangeVerdict
from zero_memory.judge import yes_no
from zero_memory.judge.base import Judge
from zero_memory.judge.parse import parse_answer, response_schema
from zero_memory.judge.prompt import JudgedMemory, Prompt, instructions, memory_block
from zero_memory.judge.question import Purpose, Tier
from zero_memory.judge.yes_no import Answer

SCHEMA_NAME: Final = "code_change_verdict"
SCHEMA: Final = response_schema(CodeChangeVerdict)


@dataclass(frozen=True, slots=True)
class CodeChangeRequest:
    """Is ``memory`` still true of the code at ``anchor`` after ``diff``? ``provisional``: the fast model."""

    memory: JudgedMemory
    anchor: str
    diff: str
    purpose: Purpose = Purpose.CODE_CHANGE
    provisional: bool = False

    @property
    def tier(self) -> Tier:
        return Tier.FAST if self.provisional else Tier.ADJUDICATION

    def prompt(self) -> Prompt:
        return Prompt(
            system=instructions("code_change_prompt.txt"),
            user=message(self.memory, self.anchor, self.diff),
            schema_name=SCHEMA_NAME,
            schema=SCHEMA,
            description="Record whether the memory is still true after the code change.",
        )

    def parse(self, raw: str | dict[str, Any]) -> CodeChangeVerdict:
        return parse_answer(CodeChangeVerdict, raw)

    def fake_answer(self, scripted: object) -> CodeChangeVerdict:
        """A bool (confidence 1.0), a ``(still_true, confidence)`` pair, or a ``CodeChangeVerdict``."""
        return yes_no.fake_answer(scripted, CodeChangeVerdict, "still_true", "code-change")


def message(memory: JudgedMemory, anchor: str, diff: str) -> str:
    return "\n\n".join(
        [
            memory_block("Memory", memory),
            f"It is anchored to {anchor}, whose code changed:\n<diff>\n{diff}\n</diff>",
            "Is the memory still true of the code after this change?",
        ]
    )


def request_for(memory: Memory, anchor: str, diff: str, now: datetime) -> CodeChangeRequest:
    return CodeChangeRequest(JudgedMemory.of(memory, now), anchor, diff, provisional=memory.rank == Rank.PROVISIONAL)


def ask(judge: Judge, request: CodeChangeRequest) -> Answer | None:
    return yes_no.ask(judge, request, "still_true")
