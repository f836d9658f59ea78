from __future__ import annotations

from collections.abc import Callable

from tests.fakes.openai_server import FakeOpenAIServer
from tests.judge.conftest import PAIR, PROVISIONAL_PAIR, STRONG
from zero_memory.judge.base import FailureKind, Judge, Judged
from zero_memory.judge.fake import FakeJudge
from zero_memory.judge.ledger import AttributedJudge, LedgerEntry, judge_and_record
from zero_memory.judge.none_provider import NoneJudge
from zero_memory.judge.prompt import JudgedMemory
from zero_memory.judge.question import Purpose
from zero_memory.judge.questions.pair import PairRequest
from zero_memory.judge.questions.portability import PortabilityRequest


def test_every_judgement_is_recorded_against_the_owner_under_review() -> None:
    rows: list[LedgerEntry] = []
    judge = AttributedJudge(FakeJudge(default="unrelated"), owner="u_ana", run_id="run_1", record=rows.append)
    judge.ask(PairRequest(PAIR.a, PAIR.b, Purpose.RETRO))
    assert rows == [
        LedgerEntry(
            owner="u_ana",
            model="fake-strong",
            purpose="retro",
            input_tokens=100,
            output_tokens=20,
            latency_ms=0,
            outcome="judged",
            run_id="run_1",
        )
    ]


def test_failures_are_recorded_too_with_their_kind_as_outcome() -> None:
    rows: list[LedgerEntry] = []
    judge = AttributedJudge(
        FakeJudge([FailureKind.TIMEOUT, FailureKind.MALFORMED]), owner="u_bo", run_id=None, record=rows.append
    )
    judge.ask(PAIR)
    judge.ask(PROVISIONAL_PAIR)
    assert [(r.outcome, r.model) for r in rows] == [("timeout", "fake-strong"), ("malformed", "fake-fast")]


def test_offer_mode_makes_no_call_and_records_nothing() -> None:
    rows: list[LedgerEntry] = []
    AttributedJudge(NoneJudge(), owner="u_ana", run_id=None, record=rows.append).ask(PAIR)
    assert rows == []


def test_portability_calls_carry_their_purpose() -> None:
    rows: list[LedgerEntry] = []
    request = PortabilityRequest(JudgedMemory("gotcha", 1, "x"), Purpose.GATE)
    judge_and_record(FakeJudge([True]), request, owner="u_ana", run_id=None, record=rows.append)
    assert [r.purpose for r in rows] == ["gate"]


def test_the_attributed_judge_is_a_judge_that_sees_through_to_its_model() -> None:
    judge = AttributedJudge(FakeJudge(model="m1", fast_model="m2"), owner="u", run_id=None, record=lambda _: None)
    assert isinstance(judge, Judge)
    assert judge.provider == "fake"
    assert (judge.model_for(PAIR), judge.model_for(PROVISIONAL_PAIR)) == ("m1", "m2")


def test_a_real_call_records_the_provider_s_token_counts_and_latency(
    openai_server: FakeOpenAIServer, openai_judge: Callable[..., Judge]
) -> None:
    openai_server.enqueue(openai_server.verdict(prompt_tokens=512, completion_tokens=64), openai_server.error(400))
    rows: list[LedgerEntry] = []
    judge = AttributedJudge(openai_judge(), owner="u_ana", run_id="run_9", record=rows.append)
    assert isinstance(judge.ask(PAIR), Judged)
    judge.ask(PAIR)
    judged, failed = rows
    assert (judged.model, judged.input_tokens, judged.output_tokens, judged.outcome) == (
        STRONG,
        512,
        64,
        "judged",
    )
    assert (failed.input_tokens, failed.output_tokens, failed.outcome) == (0, 0, "http_error")
    assert judged.latency_ms >= 0 and failed.latency_ms >= 0
