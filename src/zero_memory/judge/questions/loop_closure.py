"""Does a later memory show an open task done, or an open question answered? Answered with a ``LoopClosureVerdict``.

Asked by the loop-closure stage of a full cycle (``hygiene.loop_closure``),
purpose ``loop_closure``, through the loop owner's judge (their key, their
ledger rows). The adjudication model answers, or the fast one when the
evidence is provisional (a capture). ``ask`` gives ``(closed, confidence,
rationale)`` or None, and None always means "not shown closed": a timeout, a
refusal, a malformed answer. The confidence floor is the caller's to apply.
The instructions are ``loop_closure_prompt.txt``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from zero_memory.domain.memory import Memory, Rank
from zero_memory.domain.verdicts import LoopClosureVerdict
from zero_memory.judge import yes_no
from zero_memory.judge.base import Judge
from zero_memory.judge.parse import parse_answer, response_schema
from zero_memory.judge.prompt import JudgedMemory, Prompt, instructions, memory_block
from zero_memory.judge.question import Purpose, Tier
from zero_memory.judge.yes_no import Answer

SCHEMA_NAME: Final = "loop_closure_verdict"
SCHEMA: Final = response_schema(LoopClosureVerdict)


@dataclass(frozen=True, slots=True)
class LoopClosureRequest:
    """Does the later memory show the open loop done (a task) or answered (a question)?

    ``provisional``: the evidence has rank 0, so the fast model judges.
    """

    loop: JudgedMemory
    evidence: JudgedMemory
    purpose: Purpose = Purpose.LOOP_CLOSURE
    provisional: bool = False

    @property
    def tier(self) -> Tier:
        return Tier.FAST if self.provisional else Tier.ADJUDICATION

    def prompt(self) -> Prompt:
        return Prompt(
            system=instructions("loop_closure_prompt.txt"),
            user=message(self.loop, self.evidence),
            schema_name=SCHEMA_NAME,
            schema=SCHEMA,
            description="Record whether the later memory closes the open loop.",
        )

    def parse(self, raw: str | dict[str, Any]) -> LoopClosureVerdict:
        return parse_answer(LoopClosureVerdict, raw)

    def fake_answer(self, scripted: object) -> LoopClosureVerdict:
        """A bool (confidence 1.0), a ``(closed, confidence)`` pair, or a ``LoopClosureVerdict``."""
        return yes_no.fake_answer(scripted, LoopClosureVerdict, "closed", "loop-closure")


def message(loop: JudgedMemory, evidence: JudgedMemory) -> str:
    if loop.kind == "task":
        question = "Does the later memory show this task done?"
    else:
        question = "Does the later memory answer this question?"
    return "\n\n".join([memory_block("Open loop", loop), memory_block("Later memory", evidence), question])


def request_for(loop: Memory, evidence: Memory, now: datetime) -> LoopClosureRequest:
    """The request; provisional evidence (a capture) goes to the fast model."""
    return LoopClosureRequest(
        JudgedMemory.of(loop, now), JudgedMemory.of(evidence, now), provisional=evidence.rank == Rank.PROVISIONAL
    )


def ask(judge: Judge, request: LoopClosureRequest) -> Answer | None:
    return yes_no.ask(judge, request, "closed")
