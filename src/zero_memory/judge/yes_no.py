"""What the yes-or-no questions share (is the loop closed? is the memory still true? is it portable?): the
fake's shorthand for their answer, and their answer as the stages read it, ``(yes, confidence, rationale)``."""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel

from zero_memory.judge.base import Judge, Judged
from zero_memory.judge.question import FAKE_RATIONALE, Question

V = TypeVar("V", bound=BaseModel)

Answer = tuple[bool, float, str]


def fake_answer(scripted: object, verdict: type[V], field: str, question: str) -> V:
    """A bool (confidence 1.0), a ``(yes, confidence)`` pair, or a ``verdict`` itself."""
    if isinstance(scripted, bool):
        scripted = (scripted, 1.0)
    if isinstance(scripted, tuple) and isinstance(scripted[0], bool):
        return verdict.model_validate({field: scripted[0], "confidence": scripted[1], "rationale": FAKE_RATIONALE})
    if isinstance(scripted, verdict):
        return scripted
    raise TypeError(f"FakeJudge: {scripted!r} does not answer a {question} request")


def ask(judge: Judge, request: Question[V], field: str) -> Answer | None:
    """``(yes, confidence, rationale)``, or None when the judge gave no valid verdict (fail closed)."""
    result = judge.ask(request)
    if isinstance(result, Judged):
        verdict = result.answer
        return getattr(verdict, field), verdict.confidence, verdict.rationale  # type: ignore[attr-defined]
    return None
