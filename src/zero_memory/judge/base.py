"""The judge port: one generic method, ``ask(question) -> Result[A]``.

The pipeline hands a ``Judge`` one question (``judge.question``; the
questions themselves live in ``judge.questions``) and gets back exactly one of:

- ``Judged[A]``: the question's validated answer and what it cost;
- ``Unjudged``: offer mode, no model was asked (a pair is parked ``unjudged``);
- ``JudgeFailure``: no judgement — a timeout, an HTTP error, a refusal, an
  answer that broke the contract. The pipeline treats it as nothing: no
  action, nothing cached, the question is asked again on a later run.

A question about memories carries each memory's kind, age and verbatim
content, and nothing else: never its scope or project (measured to make the
judge worse), never its id or rank (deterministic rules belong to routing,
not to the model).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar, Generic, Protocol, TypeVar, Union, runtime_checkable

from zero_memory.domain.verdicts import UNJUDGED
from zero_memory.judge.question import Question, Tier

A = TypeVar("A")


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
class Judged(Generic[A]):
    """The question's answer, validated, and what it cost."""

    answer: A
    usage: Usage
    outcome: ClassVar[str] = "judged"


@dataclass(frozen=True, slots=True)
class Unjudged:
    """Offer mode: no model was asked. A pair is parked with verdict ``unjudged``."""

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


Result = Union[Judged[A], Unjudged, JudgeFailure]  # noqa: UP007 -- a generic alias: Result[HygieneVerdict]
AnyResult = Result[Any]


@runtime_checkable
class Judge(Protocol):
    """The port. ``provider`` names the implementation (``openai``, ``anthropic``, ``none``, ``fake``).

    ``offer_mode`` is what the judge can do, declared rather than guessed from
    its type: True when it asks no model and every question comes back
    ``Unjudged`` — the pipeline then parks pairs for a person and skips the
    passes that need an opinion (re-judge, re-examination, portability).
    """

    @property
    def provider(self) -> str: ...

    @property
    def offer_mode(self) -> bool: ...

    def model_for(self, question: Question[Any]) -> str:
        """The exact model string a call for ``question`` uses: the judgement cache's key."""
        ...

    def ask(self, question: Question[A]) -> Result[A]:
        """Ask once; never raises for anything the provider does."""
        ...


def model_for(tier: Tier, *, model: str, fast_model: str, extract_model: str | None = None) -> str:
    """The model of a tier: the adjudication model, the fast one, or the extraction model (by default the fast one)."""
    if tier is Tier.EXTRACTION:
        return extract_model or fast_model
    if tier is Tier.FAST:
        return fast_model
    return model


JudgeFactory = Callable[[str, str | None], Judge]
"""``(owner, run_id) -> Judge``: the judge acting for ``owner`` in run ``run_id`` (None outside a run)."""
