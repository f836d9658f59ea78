from __future__ import annotations

import pytest

from tests.judge.conftest import PAIR, PROVISIONAL_PAIR
from zero_memory.domain.verdicts import HygieneVerdict, Verdict
from zero_memory.judge.base import FailureKind, Judge, Judged, JudgeFailure, Unjudged
from zero_memory.judge.fake import FakeJudge, FakeJudgeExhausted
from zero_memory.judge.prompt import JudgedMemory
from zero_memory.judge.questions.portability import PortabilityRequest

PORTABILITY = PortabilityRequest(JudgedMemory("gotcha", 1, "git stash drops untracked files"))


def test_a_fake_judge_is_a_judge() -> None:
    assert isinstance(FakeJudge(), Judge)


def test_queued_answers_come_back_in_order_and_requests_are_recorded() -> None:
    judge = FakeJudge(["duplicate", ("b_supersedes_a", 0.97), FailureKind.TIMEOUT])
    first, second, third = (judge.ask(PAIR) for _ in range(3))
    assert isinstance(first, Judged) and (first.answer.verdict, first.answer.confidence) == (
        Verdict.DUPLICATE,
        1.0,
    )
    assert isinstance(second, Judged) and (second.answer.verdict, second.answer.confidence) == (
        Verdict.B_SUPERSEDES_A,
        0.97,
    )
    assert isinstance(third, JudgeFailure) and third.kind is FailureKind.TIMEOUT
    assert judge.requests == [PAIR, PAIR, PAIR]


def test_a_function_answers_every_request() -> None:
    judge = FakeJudge(lambda request: "duplicate" if request.a == request.b else "unrelated")
    same = judge.ask(PAIR.__class__(PAIR.a, PAIR.a))
    different = judge.ask(PAIR)
    assert isinstance(same, Judged) and same.answer.verdict is Verdict.DUPLICATE
    assert isinstance(different, Judged) and different.answer.verdict is Verdict.UNRELATED


def test_the_queue_goes_first_then_the_default() -> None:
    judge = FakeJudge(["contradiction"], default="unrelated")
    verdicts = [judge.ask(PAIR) for _ in range(3)]
    assert [v.answer.verdict for v in verdicts if isinstance(v, Judged)] == [
        Verdict.CONTRADICTION,
        Verdict.UNRELATED,
        Verdict.UNRELATED,
    ]


def test_running_out_of_answers_is_a_mistake_in_the_test() -> None:
    judge = FakeJudge(["duplicate"])
    judge.ask(PAIR)
    with pytest.raises(FakeJudgeExhausted):
        judge.ask(PAIR)


def test_finished_results_and_full_verdicts_pass_through() -> None:
    verdict = HygieneVerdict(verdict=Verdict.CONTRADICTION, confidence=0.6, rationale="They disagree.")
    judge = FakeJudge([verdict, Unjudged()])
    judged = judge.ask(PAIR)
    assert isinstance(judged, Judged) and judged.answer == verdict
    assert isinstance(judge.ask(PAIR), Unjudged)


def test_portability_answers_are_booleans_or_portability_verdicts() -> None:
    judge = FakeJudge([True, False])
    first, second = judge.ask(PORTABILITY), judge.ask(PORTABILITY)
    assert isinstance(first, Judged) and first.answer.portable is True
    assert isinstance(second, Judged) and second.answer.portable is False


def test_a_pair_answer_to_a_portability_request_is_refused_loudly() -> None:
    with pytest.raises(TypeError):
        FakeJudge(["duplicate"]).ask(PORTABILITY)


def test_the_fake_follows_the_two_paths_and_reports_usage() -> None:
    judge = FakeJudge(default="unrelated", model="strong", fast_model="fast", input_tokens=7, output_tokens=3)
    assert judge.model_for(PAIR) == "strong"
    assert judge.model_for(PROVISIONAL_PAIR) == "fast"
    assert judge.model_for(PORTABILITY) == "strong"
    result = judge.ask(PROVISIONAL_PAIR)
    assert isinstance(result, Judged)
    assert (result.usage.model, result.usage.input_tokens, result.usage.output_tokens) == ("fast", 7, 3)
    assert result.usage.latency_ms == 0
