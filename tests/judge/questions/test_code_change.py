"""The code-change question on its own: its verdict, its prompt, its model, its fake answers, and a round trip
through each provider. Verification, which asks it, is tested in tests/memory/test_verification_judge.py."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.openai_server import FakeOpenAIServer
from tests.judge.conftest import FAST, STRONG, Provider
from zero_memory.domain.memory import AuthorKind, Kind, Memory, Rank
from zero_memory.domain.verdicts import CodeChangeVerdict
from zero_memory.judge.base import FailureKind, Judged, JudgeFailure
from zero_memory.judge.fake import FAKE_RATIONALE, FakeJudge
from zero_memory.judge.none_provider import NoneJudge
from zero_memory.judge.parse import InvalidAnswer
from zero_memory.judge.prompt import JudgedMemory
from zero_memory.judge.question import Purpose, Tier
from zero_memory.judge.questions.code_change import SCHEMA, CodeChangeRequest, ask, request_for

NOW = datetime(2025, 6, 1, tzinfo=UTC)
FACT = "retry() backs off exponentially, capped at 30 s"
DIFF = "-    return min(2**attempts, 30)\n+    return min(2**attempts, 60)"
REQUEST = CodeChangeRequest(JudgedMemory("fact", 40, FACT), "net/client.py::retry", DIFF)
STALE = {"rationale": "The cap is now 60 s.", "still_true": False, "confidence": 0.95}


def memory(rank: Rank) -> Memory:
    return Memory(
        id="mem_01J0000000000000000000000",
        owner="u_ana",
        scope="proj.u_ana.api",
        kind=Kind.FACT,
        content=FACT,
        author_kind=AuthorKind.AGENT,
        agent_name="claude-code",
        rank=rank,
        source={},
        created_at=NOW - timedelta(days=3),
        updated_at=NOW,
    )


def test_the_verdict_is_strict() -> None:
    assert REQUEST.parse('{"rationale": "r", "still_true": true, "confidence": 0.9}').still_true
    for bad in ('{"rationale": "r", "still_true": "yes", "confidence": 0.9}', '{"still_true": true, "confidence": 2}'):
        with pytest.raises(InvalidAnswer):
            REQUEST.parse(bad)


def test_the_prompt_shows_the_memory_its_anchor_and_the_diff() -> None:
    prompt = REQUEST.prompt()
    assert prompt.schema_name == "code_change_verdict"
    assert prompt.user.index(FACT) < prompt.user.index("net/client.py::retry") < prompt.user.index(DIFF)
    assert set(prompt.schema["properties"]) == {"rationale", "still_true", "confidence"}
    assert "unsure, answer not still true" in prompt.system


def test_a_provisional_memory_goes_to_the_fast_model_and_the_purpose_is_code_change() -> None:
    stated = request_for(memory(Rank.AGENT), "net/client.py::retry", DIFF, NOW)
    captured = request_for(memory(Rank.PROVISIONAL), "net/client.py::retry", DIFF, NOW)
    assert (stated.tier, captured.tier) == (Tier.ADJUDICATION, Tier.FAST)
    assert stated.purpose is Purpose.CODE_CHANGE
    judge = FakeJudge()
    assert (judge.model_for(stated), judge.model_for(captured)) == ("fake-strong", "fake-fast")


def test_the_fake_answers_with_a_bool_a_pair_or_a_verdict() -> None:
    verdict = CodeChangeVerdict(still_true=False, confidence=0.4, rationale="Unclear.")
    judge = FakeJudge([True, (False, 0.7), verdict, FailureKind.TIMEOUT])
    assert ask(judge, REQUEST) == (True, 1.0, FAKE_RATIONALE)
    assert ask(judge, REQUEST) == (False, 0.7, FAKE_RATIONALE)
    assert ask(judge, REQUEST) == (False, 0.4, "Unclear.")
    assert ask(judge, REQUEST) is None
    with pytest.raises(TypeError):
        FakeJudge(["duplicate"]).ask(REQUEST)
    assert ask(NoneJudge(), REQUEST) is None  # offer mode: never shown still true


def test_each_provider_sends_the_question_and_parses_the_answer(provider: Provider) -> None:
    if isinstance(provider.server, FakeOpenAIServer):
        provider.server.enqueue(FakeOpenAIServer.completion(json.dumps(STALE)))
    else:
        provider.server.enqueue(FakeAnthropicServer.tool_use(STALE, name="code_change_verdict"))
    result = provider.judge().ask(REQUEST)
    assert isinstance(result, Judged) and result.answer == CodeChangeVerdict.model_validate(STALE)
    assert result.usage.model == STRONG
    request = provider.server.last_request
    if isinstance(provider.server, FakeOpenAIServer):
        assert request.body["response_format"]["json_schema"]["schema"] == SCHEMA
    else:
        assert request.body["tool_choice"] == {"type": "tool", "name": "code_change_verdict"}
    assert DIFF in provider.server.user_message(request)


def test_a_broken_answer_is_a_failure_not_a_verdict(provider: Provider) -> None:
    broken = {**STALE, "still_true": "no"}
    if isinstance(provider.server, FakeOpenAIServer):
        provider.server.enqueue(FakeOpenAIServer.completion(json.dumps(broken)))
    else:
        provider.server.enqueue(FakeAnthropicServer.tool_use(broken, name="code_change_verdict"))
    result = provider.judge().ask(CodeChangeRequest(REQUEST.memory, REQUEST.anchor, DIFF, provisional=True))
    assert isinstance(result, JudgeFailure) and result.kind is FailureKind.INVALID_VERDICT
    assert result.usage.model == FAST
