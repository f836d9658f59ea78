"""An in-process judge for tests and benchmarks: scripted answers, zero latency.

    judge = FakeJudge(["duplicate", ("b_supersedes_a", 0.97), FailureKind.TIMEOUT])
    judge.ask(pair)              # Judged(duplicate, confidence 1.0)
    judge.ask(pair)              # Judged(b_supersedes_a, 0.97)
    judge.ask(pair)              # JudgeFailure(timeout)
    judge.requests               # the three questions, in order

    FakeJudge(lambda request: "unrelated")   # answers every question from a function
    FakeJudge(default="unrelated")           # a queue first, then a fallback

An answer is whatever the question's ``fake_answer`` accepts — for a pair a
verdict name or ``Verdict`` (confidence 1.0), a ``(verdict, confidence)``
pair or a ``HygieneVerdict``; for portability a bool or a
``PortabilityVerdict``; for extraction an ``ExtractionAnswer`` or a list of
statements as dicts — or a ``FailureKind`` (a failure with a fixed detail),
or any finished result (``Judged``, ``Unjudged``, ``JudgeFailure``) returned
as is. An answer that does not fit the question raises ``TypeError``;
running out of answers is a mistake in the test and raises
``FakeJudgeExhausted``.

It lives in the package, not under tests/, because the benchmarks drive the
real pipeline with it too; nothing in the server imports it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from zero_memory.judge.base import (
    FailureKind,
    Judged,
    JudgeFailure,
    Result,
    Unjudged,
    Usage,
    model_for,
)
from zero_memory.judge.question import FAKE_RATIONALE, Question

A = TypeVar("A")

__all__ = ["FAKE_RATIONALE", "FakeAnswer", "FakeJudge", "FakeJudgeExhausted"]

FakeAnswer = object
"""What the question's ``fake_answer`` accepts, a ``FailureKind``, or a finished result."""
# The function takes Any, not a question type: a test that only asks about pairs
# can write ``lambda request: … request.a …`` without narrowing first.
Script = Iterable[FakeAnswer] | Callable[[Any], FakeAnswer]


class FakeJudgeExhausted(AssertionError):
    """The test asked more than it scripted."""


class FakeJudge:
    provider = "fake"
    offer_mode = False

    def __init__(
        self,
        answers: Script = (),
        *,
        default: FakeAnswer | None = None,
        model: str = "fake-strong",
        fast_model: str = "fake-fast",
        extract_model: str | None = None,
        input_tokens: int = 100,
        output_tokens: int = 20,
    ) -> None:
        self._function = answers if callable(answers) else None
        self._queue: deque[FakeAnswer] = deque() if callable(answers) else deque(answers)
        self._default = default
        self.model = model
        self.fast_model = fast_model
        self.extract_model = extract_model or fast_model
        self._tokens = (input_tokens, output_tokens)
        self.requests: list[Question[Any]] = []

    def __repr__(self) -> str:
        return f"FakeJudge(model={self.model!r}, fast_model={self.fast_model!r}, queued={len(self._queue)})"

    def enqueue(self, *answers: FakeAnswer) -> None:
        self._queue.extend(answers)

    @property
    def pending(self) -> int:
        """Answers queued and not yet given."""
        return len(self._queue)

    def model_for(self, question: Question[Any]) -> str:
        return model_for(question.tier, model=self.model, fast_model=self.fast_model, extract_model=self.extract_model)

    def ask(self, question: Question[A]) -> Result[A]:
        self.requests.append(question)
        if self._queue:
            answer = self._queue.popleft()
        elif self._function is not None:
            answer = self._function(question)
        elif self._default is not None:
            answer = self._default
        else:
            raise FakeJudgeExhausted(f"FakeJudge: no answer scripted for request #{len(self.requests)}")
        if isinstance(answer, Judged | Unjudged | JudgeFailure):
            return answer
        usage = Usage(self.model_for(question), *self._tokens, latency_ms=0)
        if isinstance(answer, FailureKind):
            return JudgeFailure(answer, f"fake {answer} failure", usage)
        return Judged(question.fake_answer(answer), usage)
