"""Offer mode: no model. Every question comes back ``Unjudged``.

The pipeline still runs: pairs are parked in the review queue with verdict
``unjudged`` for a person or the session agent to adjudicate, and the
portability gate denies (it fails closed). Nothing is sent anywhere, nothing
is written to the usage ledger, nothing is cached.
"""

from __future__ import annotations

from typing import Any, TypeVar

from zero_memory.judge.base import Result, Unjudged
from zero_memory.judge.question import Question

A = TypeVar("A")

OFFER_MODEL = "none"


class NoneJudge:
    provider = "none"
    offer_mode = True

    def __repr__(self) -> str:
        return "NoneJudge()"

    def model_for(self, question: Question[Any]) -> str:
        return OFFER_MODEL

    def ask(self, question: Question[A]) -> Result[A]:
        return Unjudged()
