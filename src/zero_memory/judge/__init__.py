"""The judge: an LLM that classifies a pair of memories, behind a one-method port.

    judge = build_judge(settings)                       # openai, anthropic or none
    judge.model_for(request)                            # the judgement cache's model key
    result = judge.judge(PairRequest(a, b, Purpose.SCAN, provisional=False))
    match result:
        case Judged(verdict=v): ...                     # v.verdict, v.confidence, v.rationale
        case Unjudged(): ...                            # offer mode: park as `unjudged`
        case JudgeFailure(kind=k): ...                  # no judgement: no action, retry later

See docs/judge.md.
"""

from zero_memory.judge.base import (
    Extracted,
    ExtractionRequest,
    ExtractionResult,
    FailureKind,
    Judge,
    Judged,
    JudgedMemory,
    JudgedPortability,
    JudgeFailure,
    JudgeRequest,
    JudgeResult,
    PairRequest,
    PairResult,
    PortabilityRequest,
    PortabilityResult,
    Purpose,
    Unjudged,
    Usage,
)
from zero_memory.judge.factory import build_judge
from zero_memory.judge.fake import FakeJudge
from zero_memory.judge.ledger import AttributedJudge, LedgerEntry, judge_and_record
from zero_memory.judge.provider import RetryPolicy
from zero_memory.judge.verdict import UNJUDGED, HygieneVerdict, PortabilityVerdict, Verdict

__all__ = [
    "UNJUDGED",
    "AttributedJudge",
    "Extracted",
    "ExtractionRequest",
    "ExtractionResult",
    "FailureKind",
    "FakeJudge",
    "HygieneVerdict",
    "Judge",
    "JudgeFailure",
    "JudgeRequest",
    "JudgeResult",
    "Judged",
    "JudgedMemory",
    "JudgedPortability",
    "LedgerEntry",
    "PairRequest",
    "PairResult",
    "PortabilityRequest",
    "PortabilityResult",
    "PortabilityVerdict",
    "Purpose",
    "RetryPolicy",
    "Unjudged",
    "Usage",
    "Verdict",
    "build_judge",
    "judge_and_record",
]
