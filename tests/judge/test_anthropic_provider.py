"""The Anthropic provider, through the real SDK, against a fake Messages endpoint on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.judge.conftest import FAST, OWNER_KEY, PAIR, PROVISIONAL_PAIR, SERVER_KEY, STRONG, settings_for
from zero_memory.domain.verdicts import Verdict
from zero_memory.judge.base import FailureKind, Judge, Judged, JudgeFailure
from zero_memory.judge.factory import build_judge
from zero_memory.judge.prompt import JudgedMemory
from zero_memory.judge.questions.pair import SCHEMA as HYGIENE_SCHEMA
from zero_memory.judge.questions.portability import SCHEMA as PORTABILITY_SCHEMA
from zero_memory.judge.questions.portability import PortabilityRequest

JudgeFactory = Callable[..., Judge]


def test_a_pair_is_posted_to_messages_with_one_forced_tool(
    anthropic_server: FakeAnthropicServer, anthropic_judge: JudgeFactory
) -> None:
    anthropic_server.enqueue(anthropic_server.verdict())
    anthropic_judge().ask(PAIR)
    request = anthropic_server.last_request
    assert (request.method, request.path) == ("POST", "/v1/messages")
    [tool] = request.body["tools"]
    assert tool["name"] == "hygiene_verdict"
    assert tool["input_schema"] == HYGIENE_SCHEMA
    assert request.body["tool_choice"] == {"type": "tool", "name": "hygiene_verdict"}
    assert request.body["max_tokens"] > 0


def test_the_instructions_are_the_system_prompt_and_the_pair_the_user_message(
    anthropic_server: FakeAnthropicServer, anthropic_judge: JudgeFactory
) -> None:
    anthropic_server.enqueue(anthropic_server.verdict())
    anthropic_judge().ask(PAIR)
    request = anthropic_server.last_request
    assert "covers every actionable specific" in anthropic_server.system_message(request)
    assert [m["role"] for m in request.body["messages"]] == ["user"]
    user = anthropic_server.user_message(request)
    assert PAIR.a.content in user and PAIR.b.content in user


def test_each_path_asks_its_own_model(anthropic_server: FakeAnthropicServer, anthropic_judge: JudgeFactory) -> None:
    anthropic_server.enqueue(anthropic_server.verdict(), anthropic_server.verdict())
    judge = anthropic_judge()
    judge.ask(PAIR)
    judge.ask(PROVISIONAL_PAIR)
    assert [r.body["model"] for r in anthropic_server.requests] == [STRONG, FAST]


def test_portability_forces_the_portability_verdict_tool(
    anthropic_server: FakeAnthropicServer, anthropic_judge: JudgeFactory
) -> None:
    anthropic_server.enqueue(anthropic_server.portability(False, 0.9, "Names this repo's CI."))
    result = anthropic_judge().ask(PortabilityRequest(JudgedMemory("fact", 1, "CI runs on the infra-2 runner")))
    body = anthropic_server.last_request.body
    assert body["tools"][0]["name"] == "portability_verdict"
    assert body["tools"][0]["input_schema"] == PORTABILITY_SCHEMA
    assert body["tool_choice"] == {"type": "tool", "name": "portability_verdict"}
    assert body["model"] == STRONG
    assert isinstance(result, Judged) and result.answer.portable is False


def test_the_tool_input_comes_back_as_a_verdict_with_its_cost(
    anthropic_server: FakeAnthropicServer, anthropic_judge: JudgeFactory
) -> None:
    anthropic_server.enqueue(
        anthropic_server.verdict("complementary", 0.88, "Summary and gotcha.", input_tokens=700, output_tokens=60)
    )
    result = anthropic_judge().ask(PAIR)
    assert isinstance(result, Judged)
    assert (result.answer.verdict, result.answer.confidence) == (Verdict.COMPLEMENTARY, 0.88)
    assert (result.usage.model, result.usage.input_tokens, result.usage.output_tokens) == (STRONG, 700, 60)


def test_the_owner_key_is_the_credential_sent(
    anthropic_server: FakeAnthropicServer, anthropic_judge: JudgeFactory
) -> None:
    anthropic_server.enqueue(anthropic_server.verdict(), anthropic_server.verdict())
    anthropic_judge().ask(PAIR)
    anthropic_judge(api_key=OWNER_KEY).ask(PAIR)
    assert [r.api_key for r in anthropic_server.requests] == [SERVER_KEY, OWNER_KEY]


def test_without_any_key_the_provider_is_unavailable(anthropic_server: FakeAnthropicServer, tmp_path: Path) -> None:
    settings = settings_for("anthropic", anthropic_server.base_url, tmp_path, ZM_JUDGE_API_KEY="")
    result = build_judge(settings).ask(PAIR)
    assert isinstance(result, JudgeFailure) and result.kind is FailureKind.UNAVAILABLE
    assert "ANTHROPIC_API_KEY" in result.detail
    assert anthropic_server.requests == []


def test_a_refusal_stop_is_a_refusal(anthropic_server: FakeAnthropicServer, anthropic_judge: JudgeFactory) -> None:
    anthropic_server.enqueue(anthropic_server.refusal())
    result = anthropic_judge().ask(PAIR)
    assert isinstance(result, JudgeFailure) and result.kind is FailureKind.REFUSAL
    assert result.usage.input_tokens == 210


def test_a_text_answer_without_the_tool_call_is_malformed(
    anthropic_server: FakeAnthropicServer, anthropic_judge: JudgeFactory
) -> None:
    anthropic_server.enqueue(anthropic_server.text('{"verdict": "duplicate", "confidence": 1, "rationale": "x"}'))
    result = anthropic_judge().ask(PAIR)
    assert isinstance(result, JudgeFailure) and result.kind is FailureKind.MALFORMED
    assert "does not call hygiene_verdict" in result.detail


def test_a_call_to_another_tool_is_malformed(
    anthropic_server: FakeAnthropicServer, anthropic_judge: JudgeFactory
) -> None:
    anthropic_server.enqueue(
        anthropic_server.tool_use({"verdict": "duplicate", "confidence": 1, "rationale": "x"}, name="other")
    )
    result = anthropic_judge().ask(PAIR)
    assert isinstance(result, JudgeFailure) and result.kind is FailureKind.MALFORMED


def test_a_tool_input_that_is_not_an_object_is_malformed(
    anthropic_server: FakeAnthropicServer, anthropic_judge: JudgeFactory
) -> None:
    anthropic_server.enqueue(anthropic_server.tool_use('{"verdict": "duplicate"}'))
    result = anthropic_judge().ask(PAIR)
    assert isinstance(result, JudgeFailure) and result.kind is FailureKind.MALFORMED


def test_an_overloaded_api_is_retried(anthropic_server: FakeAnthropicServer, anthropic_judge: JudgeFactory) -> None:
    anthropic_server.enqueue(
        anthropic_server.error(529, "Overloaded", kind="overloaded_error"), anthropic_server.verdict()
    )
    assert isinstance(anthropic_judge().ask(PAIR), Judged)
    assert len(anthropic_server.requests) == 2
