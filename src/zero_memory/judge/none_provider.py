"""Offer mode: no model. Every request comes back ``Unjudged``.

The pipeline still runs: pairs are parked in the review queue with verdict
``unjudged`` for a person or the session agent to adjudicate, and the
portability gate denies (it fails closed). Nothing is sent anywhere, nothing
is written to the usage ledger, nothing is cached.
"""

from __future__ import annotations

from typing import overload

from zero_memory.judge.base import (
    ExtractionRequest,
    ExtractionResult,
    JudgeRequest,
    JudgeResult,
    LoopClosureRequest,
    LoopClosureResult,
    PairRequest,
    PairResult,
    PortabilityRequest,
    PortabilityResult,
    Unjudged,
)

OFFER_MODEL = "none"


class NoneJudge:
    provider = "none"
    offer_mode = True

    def __repr__(self) -> str:
        return "NoneJudge()"

    def model_for(self, request: JudgeRequest) -> str:
        return OFFER_MODEL

    @overload
    def judge(self, request: PairRequest) -> PairResult: ...
    @overload
    def judge(self, request: PortabilityRequest) -> PortabilityResult: ...
    @overload
    def judge(self, request: ExtractionRequest) -> ExtractionResult: ...
    @overload
    def judge(self, request: LoopClosureRequest) -> LoopClosureResult: ...
    def judge(self, request: JudgeRequest) -> JudgeResult:
        return Unjudged()
