"""The loop-closure question: does a later memory show an open task done, or an open question answered?

Asked by the loop-closure stage of a full cycle (``hygiene.loop_closure``),
purpose ``loop_closure``, through the loop owner's judge (their key, their
ledger rows). The answer is ``(closed, confidence, rationale)`` or None, and
None always means "not shown closed": a timeout, a refusal, a malformed
answer. The confidence floor is the caller's to apply.
"""

from __future__ import annotations

from datetime import datetime

from zero_memory.domain.memory import Memory, Rank
from zero_memory.judge.base import Judge, JudgedLoopClosure, JudgedMemory, LoopClosureRequest

Answer = tuple[bool, float, str]


def request_for(loop: Memory, evidence: Memory, now: datetime) -> LoopClosureRequest:
    """The request; provisional evidence (a capture) goes to the fast model."""
    return LoopClosureRequest(
        JudgedMemory.of(loop, now), JudgedMemory.of(evidence, now), provisional=evidence.rank == Rank.PROVISIONAL
    )


def ask(judge: Judge, request: LoopClosureRequest) -> Answer | None:
    result = judge.judge(request)
    if isinstance(result, JudgedLoopClosure):
        verdict = result.verdict
        return verdict.closed, verdict.confidence, verdict.rationale
    return None
