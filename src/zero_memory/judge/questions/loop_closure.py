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
from zero_memory.judge.base import Judge, Judged
from zero_memory.judge.parse import parse_answer, response_schema
from zero_memory.judge.prompt import JudgedMemory, Prompt, instructions, memory_block
from zero_memory.judge.question import FAKE_RATIONALE, Purpose, Tier

Answer = tuple[bool, float, str]

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
        if isinstance(scripted, bool):
            scripted = (scripted, 1.0)
        if isinstance(scripted, tuple) and isinstance(scripted[0], bool):
            return LoopClosureVerdict(closed=scripted[0], confidence=scripted[1], rationale=FAKE_RATIONALE)
        if isinstance(scripted, LoopClosureVerdict):
            return scripted
        raise TypeError(f"FakeJudge: {scripted!r} does not answer a loop-closure request")


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
    result = judge.ask(request)
    if isinstance(result, Judged):
        verdict = result.answer
        return verdict.closed, verdict.confidence, verdict.rationale
    return None
