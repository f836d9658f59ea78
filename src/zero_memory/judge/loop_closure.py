"""The loop-closure question: does a later memory show an open task done, or an open question answered?

Asked by the loop-closure stage of a full cycle (``hygiene.loop_closure``),
purpose ``loop_closure``, through the loop owner's judge (their key, their
ledger rows). The answer is ``(closed, confidence, rationale)`` or None, and
None always means "not shown closed": a timeout, a refusal, a malformed
answer. The confidence floor is the caller's to apply.

Not yet a ``judge.question.Question``: the judges answer it through their
``judge`` method, which exists for it alone.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache
from importlib import resources
from typing import Any, Final

from zero_memory.domain.memory import Memory, Rank
from zero_memory.domain.verdicts import LoopClosureVerdict
from zero_memory.judge.base import Judge, Judged, LoopClosureRequest
from zero_memory.judge.parse import parse_answer, response_schema
from zero_memory.judge.prompt import JudgedMemory, Prompt, memory_block
from zero_memory.judge.question import FAKE_RATIONALE

Answer = tuple[bool, float, str]

SCHEMA_NAME: Final = "loop_closure_verdict"
SCHEMA: Final = response_schema(LoopClosureVerdict)


@cache
def _instructions() -> str:
    return resources.files("zero_memory.judge").joinpath("loop_closure_prompt.txt").read_text(encoding="utf-8").strip()


def build_prompt(request: LoopClosureRequest) -> Prompt:
    return Prompt(
        system=_instructions(),
        user=loop_closure_message(request.loop, request.evidence),
        schema_name=SCHEMA_NAME,
        schema=SCHEMA,
        description="Record whether the later memory closes the open loop.",
    )


def loop_closure_message(loop: JudgedMemory, evidence: JudgedMemory) -> str:
    if loop.kind == "task":
        question = "Does the later memory show this task done?"
    else:
        question = "Does the later memory answer this question?"
    return "\n\n".join([memory_block("Open loop", loop), memory_block("Later memory", evidence), question])


def parse_loop_closure(answer: str | dict[str, Any]) -> LoopClosureVerdict:
    return parse_answer(LoopClosureVerdict, answer)


def fake_answer(scripted: object) -> LoopClosureVerdict:
    if isinstance(scripted, bool):
        scripted = (scripted, 1.0)
    if isinstance(scripted, tuple) and isinstance(scripted[0], bool):
        return LoopClosureVerdict(closed=scripted[0], confidence=scripted[1], rationale=FAKE_RATIONALE)
    if isinstance(scripted, LoopClosureVerdict):
        return scripted
    raise TypeError(f"FakeJudge: {scripted!r} does not answer a loop-closure request")


def request_for(loop: Memory, evidence: Memory, now: datetime) -> LoopClosureRequest:
    """The request; provisional evidence (a capture) goes to the fast model."""
    return LoopClosureRequest(
        JudgedMemory.of(loop, now), JudgedMemory.of(evidence, now), provisional=evidence.rank == Rank.PROVISIONAL
    )


def ask(judge: Judge, request: LoopClosureRequest) -> Answer | None:
    result = judge.judge(request)
    if isinstance(result, Judged):
        verdict = result.answer
        return verdict.closed, verdict.confidence, verdict.rationale
    return None
