"""An in-process judge for tests and benchmarks: scripted answers, zero latency.

    judge = FakeJudge(["duplicate", ("b_supersedes_a", 0.97), FailureKind.TIMEOUT])
    judge.judge(pair)            # Judged(duplicate, confidence 1.0)
    judge.judge(pair)            # Judged(b_supersedes_a, 0.97)
    judge.judge(pair)            # JudgeFailure(timeout)
    judge.requests               # the three requests, in order

    FakeJudge(lambda request: "unrelated")   # answers every request from a function
    FakeJudge(default="unrelated")           # a queue first, then a fallback

An answer may be a verdict name or ``Verdict`` (confidence 1.0), a
``(verdict, confidence)`` pair, a ``HygieneVerdict``, a bool or a
``PortabilityVerdict`` (for portability requests), an ``ExtractionAnswer``
or a list of statements as dicts (for extraction requests), a
``FailureKind`` (a failure with a fixed detail), or any finished result
(``Judged``, ``Extracted``, ``Unjudged``, ``JudgeFailure`` …) returned as is. Running out of answers is a
mistake in the test and raises ``FakeJudgeExhausted``.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, overload

from zero_memory.judge.base import (
    Extracted,
    ExtractionRequest,
    ExtractionResult,
    FailureKind,
    Judged,
    JudgedLoopClosure,
    JudgedPortability,
    JudgeFailure,
    JudgeRequest,
    JudgeResult,
    LoopClosureRequest,
    LoopClosureResult,
    PairRequest,
    PairResult,
    PortabilityRequest,
    PortabilityResult,
    Unjudged,
    Usage,
    model_for,
)
from zero_memory.judge.extraction import ExtractionAnswer
from zero_memory.judge.verdict import HygieneVerdict, LoopClosureVerdict, PortabilityVerdict, Verdict

FakeAnswer = (
    str
    | Verdict
    | tuple[str, float]
    | HygieneVerdict
    | bool
    | PortabilityVerdict
    | LoopClosureVerdict
    | tuple[bool, float]
    | ExtractionAnswer
    | list[dict[str, Any]]
    | FailureKind
    | Judged
    | JudgedPortability
    | Extracted
    | Unjudged
    | JudgeFailure
)
# The function takes Any, not JudgeRequest: a test that only asks about pairs
# can write ``lambda request: … request.a …`` without narrowing the union first.
Script = Iterable[FakeAnswer] | Callable[[Any], FakeAnswer]

FAKE_RATIONALE = "fake judge"


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
        self.requests: list[JudgeRequest] = []

    def __repr__(self) -> str:
        return f"FakeJudge(model={self.model!r}, fast_model={self.fast_model!r}, queued={len(self._queue)})"

    def enqueue(self, *answers: FakeAnswer) -> None:
        self._queue.extend(answers)

    @property
    def pending(self) -> int:
        """Answers queued and not yet given."""
        return len(self._queue)

    def model_for(self, request: JudgeRequest) -> str:
        return model_for(request, model=self.model, fast_model=self.fast_model, extract_model=self.extract_model)

    @overload
    def judge(self, request: PairRequest) -> PairResult: ...
    @overload
    def judge(self, request: PortabilityRequest) -> PortabilityResult: ...
    @overload
    def judge(self, request: ExtractionRequest) -> ExtractionResult: ...
    @overload
    def judge(self, request: LoopClosureRequest) -> LoopClosureResult: ...
    def judge(self, request: JudgeRequest) -> JudgeResult:
        self.requests.append(request)
        if self._queue:
            answer = self._queue.popleft()
        elif self._function is not None:
            answer = self._function(request)
        elif self._default is not None:
            answer = self._default
        else:
            raise FakeJudgeExhausted(f"FakeJudge: no answer scripted for request #{len(self.requests)}")
        return self._result(request, answer)

    def _result(self, request: JudgeRequest, answer: FakeAnswer) -> JudgeResult:
        usage = Usage(self.model_for(request), *self._tokens, latency_ms=0)
        if isinstance(answer, Judged | JudgedPortability | Extracted | JudgedLoopClosure | Unjudged | JudgeFailure):
            return answer
        if isinstance(answer, FailureKind):
            return JudgeFailure(answer, f"fake {answer} failure", usage)
        if isinstance(request, ExtractionRequest):
            if isinstance(answer, list):
                answer = ExtractionAnswer.model_validate_json(json.dumps({"statements": answer}))
            if not isinstance(answer, ExtractionAnswer):
                raise TypeError(f"FakeJudge: {answer!r} does not answer an extraction request")
            return Extracted(answer, usage)
        if isinstance(request, LoopClosureRequest):
            if isinstance(answer, bool):
                answer = (answer, 1.0)
            if isinstance(answer, tuple) and isinstance(answer[0], bool):
                answer = LoopClosureVerdict(closed=answer[0], confidence=answer[1], rationale=FAKE_RATIONALE)
            if not isinstance(answer, LoopClosureVerdict):
                raise TypeError(f"FakeJudge: {answer!r} does not answer a loop-closure request")
            return JudgedLoopClosure(answer, usage)
        if isinstance(request, PortabilityRequest):
            if isinstance(answer, bool):
                answer = PortabilityVerdict(portable=answer, confidence=1.0, rationale=FAKE_RATIONALE)
            if not isinstance(answer, PortabilityVerdict):
                raise TypeError(f"FakeJudge: {answer!r} answers a pair, but the request is portability")
            return JudgedPortability(answer, usage)
        if isinstance(answer, list | ExtractionAnswer):
            raise TypeError(f"FakeJudge: {answer!r} answers an extraction request, not a pair")
        if isinstance(answer, tuple) and isinstance(answer[0], str):
            verdict, confidence = answer
            answer = HygieneVerdict(verdict=Verdict(verdict), confidence=confidence, rationale=FAKE_RATIONALE)
        elif isinstance(answer, str):
            answer = HygieneVerdict(verdict=Verdict(answer), confidence=1.0, rationale=FAKE_RATIONALE)
        if not isinstance(answer, HygieneVerdict):
            raise TypeError(f"FakeJudge: {answer!r} does not answer a pair request")
        return Judged(answer, usage)
