"""The loop-closure question on its own: its verdict, its prompt, its model, its fake answers, and a round trip
through each provider. The stage that asks it is tested in tests/hygiene/test_loop_closure.py."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.openai_server import FakeOpenAIServer
from tests.judge.conftest import FAST, STRONG, Provider
from zero_memory.domain.memory import AuthorKind, Kind, Memory, Rank
from zero_memory.domain.verdicts import LoopClosureVerdict
from zero_memory.judge.base import FailureKind, Judged, JudgeFailure
from zero_memory.judge.fake import FAKE_RATIONALE, FakeJudge
from zero_memory.judge.none_provider import NoneJudge
from zero_memory.judge.parse import InvalidAnswer
from zero_memory.judge.prompt import JudgedMemory
from zero_memory.judge.question import Purpose, Tier
from zero_memory.judge.questions.loop_closure import SCHEMA, LoopClosureRequest, ask, request_for

NOW = datetime(2025, 6, 1, tzinfo=UTC)
TASK = "Add retries to the invoice mailer"
DONE = "Add retries to the invoice mailer: done, the mailer now retries three times"
REQUEST = LoopClosureRequest(JudgedMemory("task", 40, TASK), JudgedMemory("episode", 2, DONE))
CLOSED = {"rationale": "The later note says the retries were added.", "closed": True, "confidence": 0.9}


def memory(content: str, kind: Kind, rank: Rank) -> Memory:
    return Memory(
        id="mem_01J0000000000000000000000",
        owner="u_ana",
        scope="user.u_ana.personal",
        kind=kind,
        content=content,
        author_kind=AuthorKind.AGENT,
        agent_name="claude-code",
        rank=rank,
        source={},
        created_at=NOW - timedelta(days=3),
        updated_at=NOW,
    )


def test_the_verdict_is_strict() -> None:
    assert REQUEST.parse('{"rationale": "r", "closed": true, "confidence": 0.9}').closed
    for bad in ('{"rationale": "r", "closed": "yes", "confidence": 0.9}', '{"closed": true, "confidence": 2}'):
        with pytest.raises(InvalidAnswer):
            REQUEST.parse(bad)


def test_the_prompt_presents_the_loop_then_the_later_memory_and_its_own_schema() -> None:
    prompt = REQUEST.prompt()
    assert prompt.schema_name == "loop_closure_verdict"
    assert prompt.user.index("Open loop — kind: task") < prompt.user.index("Later memory — kind: episode")
    assert TASK in prompt.user and DONE in prompt.user and "done" in prompt.user.splitlines()[-1]
    assert set(prompt.schema["properties"]) == {"rationale", "closed", "confidence"}
    assert "open loop" in prompt.system.lower()


def test_an_open_question_is_asked_whether_it_was_answered() -> None:
    question = LoopClosureRequest(JudgedMemory("question", 4, "Which queue do we use?"), REQUEST.evidence)
    assert question.prompt().user.splitlines()[-1] == "Does the later memory answer this question?"


def test_provisional_evidence_goes_to_the_fast_model_and_the_purpose_is_loop_closure() -> None:
    loop = memory(TASK, Kind.TASK, Rank.AGENT)
    confirmed = request_for(loop, memory(DONE, Kind.EPISODE, Rank.AGENT), NOW)
    captured = request_for(loop, memory(DONE, Kind.EPISODE, Rank.PROVISIONAL), NOW)
    assert (confirmed.tier, captured.tier) == (Tier.ADJUDICATION, Tier.FAST)
    assert confirmed.purpose is Purpose.LOOP_CLOSURE
    judge = FakeJudge()
    assert (judge.model_for(confirmed), judge.model_for(captured)) == ("fake-strong", "fake-fast")


def test_the_fake_answers_with_a_bool_a_pair_or_a_verdict_and_refuses_a_pair_verdict() -> None:
    verdict = LoopClosureVerdict(closed=False, confidence=0.4, rationale="Not yet.")
    judge = FakeJudge([True, (False, 0.7), verdict, FailureKind.TIMEOUT])
    assert ask(judge, REQUEST) == (True, 1.0, FAKE_RATIONALE)
    assert ask(judge, REQUEST) == (False, 0.7, FAKE_RATIONALE)
    assert ask(judge, REQUEST) == (False, 0.4, "Not yet.")
    assert ask(judge, REQUEST) is None
    with pytest.raises(TypeError):
        FakeJudge(["duplicate"]).ask(REQUEST)


def test_offer_mode_never_shows_a_loop_closed() -> None:
    assert ask(NoneJudge(), REQUEST) is None


def test_each_provider_sends_the_question_and_parses_the_answer(provider: Provider) -> None:
    if isinstance(provider.server, FakeOpenAIServer):
        provider.server.enqueue(FakeOpenAIServer.completion(json.dumps(CLOSED)))
    else:
        provider.server.enqueue(FakeAnthropicServer.tool_use(CLOSED, name="loop_closure_verdict"))
    result = provider.judge().ask(REQUEST)
    assert isinstance(result, Judged) and result.answer == LoopClosureVerdict.model_validate(CLOSED)
    assert result.usage.model == STRONG
    request = provider.server.last_request
    if isinstance(provider.server, FakeOpenAIServer):
        assert request.body["response_format"]["json_schema"]["schema"] == SCHEMA
    else:
        assert request.body["tool_choice"] == {"type": "tool", "name": "loop_closure_verdict"}
    assert "Open loop — kind: task" in provider.server.user_message(request)


def test_a_provider_answer_that_breaks_the_contract_is_a_failure_not_a_closed_loop(provider: Provider) -> None:
    broken = {**CLOSED, "closed": "yes"}
    if isinstance(provider.server, FakeOpenAIServer):
        provider.server.enqueue(FakeOpenAIServer.completion(json.dumps(broken)))
    else:
        provider.server.enqueue(FakeAnthropicServer.tool_use(broken, name="loop_closure_verdict"))
    judge = provider.judge()
    result = judge.ask(LoopClosureRequest(REQUEST.loop, REQUEST.evidence, provisional=True))
    assert isinstance(result, JudgeFailure) and result.kind is FailureKind.INVALID_VERDICT
    assert result.usage.model == FAST
