"""Attribution: every judge call lands in the usage ledger, against the owner under review.

The store supplies ``record`` (it writes one ledger row); this module decides
what a row says. Successes and failures are both recorded — a failed call can
cost tokens too, and a run of timeouts is worth seeing on the dashboard.
Offer mode (``Unjudged`` with no usage) made no call and records nothing.

    judge = AttributedJudge(build_judge(settings, api_key=owner_key), owner=uid,
                            run_id=run_id, record=store.record_judge_usage)
    judge.ask(PairRequest(a, b, Purpose.SCAN))     # judged and recorded
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from zero_memory.judge.base import AnyResult, Judge, Result
from zero_memory.judge.question import Question

A = TypeVar("A")


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """One judge call. ``outcome`` is ``judged`` or a failure kind (``timeout``, ``malformed`` …)."""

    owner: str
    model: str
    purpose: str
    input_tokens: int
    output_tokens: int
    latency_ms: int
    outcome: str
    run_id: str | None = None


Recorder = Callable[[LedgerEntry], None]


def entry_for(result: AnyResult, question: Question[Any], *, owner: str, run_id: str | None) -> LedgerEntry | None:
    """The ledger row for one call, or None when no call was made (offer mode)."""
    usage = result.usage
    if usage is None:
        return None
    return LedgerEntry(
        owner=owner,
        model=usage.model,
        purpose=str(question.purpose),
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        latency_ms=usage.latency_ms,
        outcome=result.outcome,
        run_id=run_id,
    )


def judge_and_record(
    judge: Judge, question: Question[A], *, owner: str, run_id: str | None, record: Recorder
) -> Result[A]:
    result = judge.ask(question)
    entry = entry_for(result, question, owner=owner, run_id=run_id)
    if entry is not None:
        record(entry)
    return result


class AttributedJudge:
    """A ``Judge`` that records every call it makes against one owner."""

    def __init__(self, judge: Judge, *, owner: str, run_id: str | None, record: Recorder) -> None:
        self.inner = judge
        self.owner = owner
        self.run_id = run_id
        self._record = record
        # What the wrapped judge is and can do, seen through the wrapper.
        self.provider = judge.provider
        self.offer_mode = judge.offer_mode

    def __repr__(self) -> str:
        return f"AttributedJudge({self.inner!r}, owner={self.owner!r}, run_id={self.run_id!r})"

    def model_for(self, question: Question[Any]) -> str:
        return self.inner.model_for(question)

    def ask(self, question: Question[A]) -> Result[A]:
        return judge_and_record(self.inner, question, owner=self.owner, run_id=self.run_id, record=self._record)
