"""The judge port: what the pipeline asks, what it gets back.

The pipeline hands a ``Judge`` one request — a pair of memories, or one memory
for the portability question — and gets back exactly one of:

- ``Judged`` / ``JudgedPortability``: a validated verdict and what it cost;
- ``Extracted``: the statements an extraction request found in a transcript chunk;
- ``Unjudged``: offer mode, no model was asked (the pair is parked ``unjudged``);
- ``JudgeFailure``: no judgement — a timeout, an HTTP error, a refusal, an
  answer that broke the contract. The pipeline treats it as nothing: no
  action, nothing cached, the pair is tried again on a later run.

A request carries each memory's kind, age and verbatim content, and nothing
else: never its scope or project (measured to make the judge worse), never
its id or rank (deterministic rules belong to routing, not to the model).

The capture stream asks the same port a third question, on its own model
(``ZM_EXTRACT_MODEL``, else the fast model): an ``ExtractionRequest`` carries
one transcript chunk and comes back ``Extracted`` — a list of self-contained
statements — or as a failure, under the same fail-closed contract.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import ClassVar, Protocol, overload, runtime_checkable

from zero_memory.domain.memory import Memory, age_days
from zero_memory.judge.extraction import ExtractionAnswer
from zero_memory.judge.verdict import UNJUDGED, HygieneVerdict, LoopClosureVerdict, PortabilityVerdict


class Purpose(StrEnum):
    """Why the judge was called; the usage ledger's ``purpose``."""

    SCAN = "scan"
    REJUDGE = "rejudge"
    RESCAN = "rescan"
    PORTABILITY = "portability"
    GATE = "gate"
    RETRO = "retro"
    EXTRACT = "extract"
    LOOP_CLOSURE = "loop_closure"


@dataclass(frozen=True, slots=True)
class JudgedMemory:
    """One memory as the judge sees it."""

    kind: str
    age_days: float
    content: str

    @classmethod
    def of(cls, memory: Memory, now: datetime) -> JudgedMemory:
        return cls(kind=str(memory.kind), age_days=age_days(memory.created_at, now), content=memory.content)


@dataclass(frozen=True, slots=True)
class PairRequest:
    """How do A and B relate? ``provisional``: a side has rank 0, so the fast model judges."""

    a: JudgedMemory
    b: JudgedMemory
    purpose: Purpose = Purpose.SCAN
    provisional: bool = False


@dataclass(frozen=True, slots=True)
class PortabilityRequest:
    """Does this project memory hold outside its project? Judged by the adjudication model."""

    memory: JudgedMemory
    purpose: Purpose = Purpose.PORTABILITY


@dataclass(frozen=True, slots=True)
class ExtractionRequest:
    """Which statements worth keeping does this transcript chunk hold? Answered by the extraction model."""

    transcript: str
    purpose: Purpose = Purpose.EXTRACT


@dataclass(frozen=True, slots=True)
class LoopClosureRequest:
    """Does the later memory show the open loop done (a task) or answered (a question)?

    ``provisional``: the evidence has rank 0, so the fast model judges.
    """

    loop: JudgedMemory
    evidence: JudgedMemory
    purpose: Purpose = Purpose.LOOP_CLOSURE
    provisional: bool = False


JudgeRequest = PairRequest | PortabilityRequest | ExtractionRequest | LoopClosureRequest


@dataclass(frozen=True, slots=True)
class Usage:
    """What one judge call cost: retries included, tokens zero when the provider said nothing."""

    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    latency_ms: int = 0


class FailureKind(StrEnum):
    TIMEOUT = "timeout"
    """No answer within ``ZM_JUDGE_TIMEOUT_S`` (the whole call, retries included)."""
    HTTP_ERROR = "http_error"
    """The provider answered with an error status (after retries, for 5xx)."""
    RATE_LIMITED = "rate_limited"
    """HTTP 429, still after the bounded retries."""
    MALFORMED = "malformed"
    """The answer is not a JSON object, is truncated, or the reply has no answer in it."""
    INVALID_VERDICT = "invalid_verdict"
    """A JSON object that breaks the contract: unknown verdict, confidence outside [0, 1], …"""
    REFUSAL = "refusal"
    """The model declined to answer."""
    UNAVAILABLE = "unavailable"
    """The provider could not be reached or is not usable as configured (no key, no connection)."""


@dataclass(frozen=True, slots=True)
class Judged:
    verdict: HygieneVerdict
    usage: Usage
    outcome: ClassVar[str] = "judged"


@dataclass(frozen=True, slots=True)
class JudgedPortability:
    verdict: PortabilityVerdict
    usage: Usage
    outcome: ClassVar[str] = "judged"


@dataclass(frozen=True, slots=True)
class Extracted:
    answer: ExtractionAnswer
    usage: Usage
    outcome: ClassVar[str] = "judged"


@dataclass(frozen=True, slots=True)
class JudgedLoopClosure:
    verdict: LoopClosureVerdict
    usage: Usage
    outcome: ClassVar[str] = "judged"


@dataclass(frozen=True, slots=True)
class Unjudged:
    """Offer mode: no model was asked. The pair is parked with verdict ``unjudged``."""

    usage: Usage | None = None
    outcome: ClassVar[str] = UNJUDGED


@dataclass(frozen=True, slots=True)
class JudgeFailure:
    """No judgement. ``detail`` is for people and logs; it never contains a key."""

    kind: FailureKind
    detail: str
    usage: Usage

    @property
    def outcome(self) -> str:
        return str(self.kind)


PairResult = Judged | Unjudged | JudgeFailure
PortabilityResult = JudgedPortability | Unjudged | JudgeFailure
ExtractionResult = Extracted | Unjudged | JudgeFailure
LoopClosureResult = JudgedLoopClosure | Unjudged | JudgeFailure
JudgeResult = Judged | JudgedPortability | Extracted | JudgedLoopClosure | Unjudged | JudgeFailure


@runtime_checkable
class Judge(Protocol):
    """The port. ``provider`` names the implementation (``openai``, ``anthropic``, ``none``, ``fake``).

    ``offer_mode`` is what the judge can do, declared rather than guessed from
    its type: True when it asks no model and every request comes back
    ``Unjudged`` — the pipeline then parks pairs for a person and skips the
    passes that need an opinion (re-judge, re-examination, portability).
    """

    @property
    def provider(self) -> str: ...

    @property
    def offer_mode(self) -> bool: ...

    def model_for(self, request: JudgeRequest) -> str:
        """The exact model string a call for ``request`` uses: the judgement cache's key."""
        ...

    @overload
    def judge(self, request: PairRequest) -> PairResult: ...
    @overload
    def judge(self, request: PortabilityRequest) -> PortabilityResult: ...
    @overload
    def judge(self, request: ExtractionRequest) -> ExtractionResult: ...
    @overload
    def judge(self, request: LoopClosureRequest) -> LoopClosureResult: ...
    def judge(self, request: JudgeRequest) -> JudgeResult:
        """Ask once; never raises for anything the provider does."""
        ...


def model_for(request: JudgeRequest, *, model: str, fast_model: str, extract_model: str | None = None) -> str:
    """The paths: the fast model when a side is provisional, the extraction model (by default the fast
    one) for a transcript chunk, else the adjudication model."""
    if isinstance(request, ExtractionRequest):
        return extract_model or fast_model
    if isinstance(request, PairRequest | LoopClosureRequest) and request.provisional:
        return fast_model
    return model


JudgeFactory = Callable[[str, str | None], Judge]
"""``(owner, run_id) -> Judge``: the judge acting for ``owner`` in run ``run_id`` (None outside a run)."""
