"""The OpenAI-compatible provider, through the real SDK, against a fake server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.server import Reply
from tests.judge.conftest import FAST, OWNER_KEY, PAIR, PROVISIONAL_PAIR, SERVER_KEY, STRONG, settings_for
from zero_memory.domain.verdicts import Verdict
from zero_memory.judge.base import FailureKind, Judge, Judged, JudgeFailure
from zero_memory.judge.factory import build_judge
from zero_memory.judge.prompt import JudgedMemory
from zero_memory.judge.questions.pair import SCHEMA as HYGIENE_SCHEMA
from zero_memory.judge.questions.portability import SCHEMA as PORTABILITY_SCHEMA
from zero_memory.judge.questions.portability import PortabilityRequest

JudgeFactory = Callable[..., Judge]


def test_a_pair_is_posted_to_chat_completions_with_the_hygiene_verdict_schema(
    openai_server: FakeOpenAIServer, openai_judge: JudgeFactory
) -> None:
    openai_server.enqueue(openai_server.verdict())
    openai_judge().ask(PAIR)
    request = openai_server.last_request
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    response_format = request.body["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["name"] == "hygiene_verdict"
    assert response_format["json_schema"]["schema"] == HYGIENE_SCHEMA
    assert response_format["json_schema"]["strict"] is True


def test_the_messages_are_the_instructions_then_the_pair(
    openai_server: FakeOpenAIServer, openai_judge: JudgeFactory
) -> None:
    openai_server.enqueue(openai_server.verdict())
    openai_judge().ask(PAIR)
    request = openai_server.last_request
    assert [m["role"] for m in request.body["messages"]] == ["system", "user"]
    assert "covers every actionable specific" in openai_server.system_message(request)
    user = openai_server.user_message(request)
    assert PAIR.a.content in user and PAIR.b.content in user
    assert user.index("Memory A") < user.index("Memory B")


def test_an_authoritative_pair_goes_to_the_adjudication_model(
    openai_server: FakeOpenAIServer, openai_judge: JudgeFactory
) -> None:
    openai_server.enqueue(openai_server.verdict())
    judge = openai_judge()
    result = judge.ask(PAIR)
    assert openai_server.last_request.body["model"] == STRONG == judge.model_for(PAIR)
    assert isinstance(result, Judged) and result.usage.model == STRONG


def test_a_pair_with_a_provisional_side_goes_to_the_fast_model(
    openai_server: FakeOpenAIServer, openai_judge: JudgeFactory
) -> None:
    openai_server.enqueue(openai_server.verdict())
    judge = openai_judge()
    result = judge.ask(PROVISIONAL_PAIR)
    assert openai_server.last_request.body["model"] == FAST == judge.model_for(PROVISIONAL_PAIR)
    assert isinstance(result, Judged) and result.usage.model == FAST


def test_portability_uses_the_portability_verdict_schema_and_the_adjudication_model(
    openai_server: FakeOpenAIServer, openai_judge: JudgeFactory
) -> None:
    openai_server.enqueue(openai_server.portability(True, 0.82, "A fact about git."))
    result = openai_judge().ask(PortabilityRequest(JudgedMemory("gotcha", 3, "git stash drops untracked files")))
    body = openai_server.last_request.body
    assert body["response_format"]["json_schema"]["name"] == "portability_verdict"
    assert body["response_format"]["json_schema"]["schema"] == PORTABILITY_SCHEMA
    assert body["model"] == STRONG
    assert isinstance(result, Judged)
    assert (result.answer.portable, result.answer.confidence) == (True, 0.82)


def test_a_valid_answer_comes_back_as_a_verdict_with_its_cost(
    openai_server: FakeOpenAIServer, openai_judge: JudgeFactory
) -> None:
    openai_server.enqueue(
        openai_server.verdict("a_supersedes_b", 0.96, "A keeps B's command.", prompt_tokens=321, completion_tokens=45)
    )
    result = openai_judge().ask(PAIR)
    assert isinstance(result, Judged)
    assert result.answer.verdict is Verdict.A_SUPERSEDES_B
    assert result.answer.confidence == 0.96
    assert result.answer.rationale == "A keeps B's command."
    assert (result.usage.input_tokens, result.usage.output_tokens) == (321, 45)
    assert result.usage.latency_ms >= 0
    assert result.outcome == "judged"


def test_the_configured_key_is_sent_as_a_bearer_token(
    openai_server: FakeOpenAIServer, openai_judge: JudgeFactory
) -> None:
    openai_server.enqueue(openai_server.verdict())
    openai_judge().ask(PAIR)
    assert openai_server.last_request.headers["authorization"] == f"Bearer {SERVER_KEY}"


def test_an_owner_key_replaces_the_configured_key(openai_server: FakeOpenAIServer, openai_judge: JudgeFactory) -> None:
    openai_server.enqueue(openai_server.verdict())
    openai_judge(api_key=OWNER_KEY).ask(PAIR)
    assert openai_server.last_request.api_key == OWNER_KEY
    assert SERVER_KEY not in str(openai_server.last_request.headers)


def test_a_local_server_needs_no_key(openai_server: FakeOpenAIServer, tmp_path: Path) -> None:
    """Ollama, llama.cpp and LM Studio ignore the key; the call goes out with a placeholder."""
    settings = settings_for("openai", openai_server.base_url, tmp_path, ZM_JUDGE_API_KEY="")
    openai_server.enqueue(openai_server.verdict())
    assert isinstance(build_judge(settings).ask(PAIR), Judged)


def test_openai_itself_without_a_key_is_unavailable_before_any_request(tmp_path: Path) -> None:
    settings = settings_for("openai", "", tmp_path, ZM_JUDGE_API_KEY="")
    result = build_judge(settings).ask(PAIR)
    assert isinstance(result, JudgeFailure)
    assert result.kind is FailureKind.UNAVAILABLE
    assert "zm user key set" in result.detail


def test_a_refusal_field_is_a_refusal(openai_server: FakeOpenAIServer, openai_judge: JudgeFactory) -> None:
    openai_server.enqueue(openai_server.refusal("I can't assist with that."))
    result = openai_judge().ask(PAIR)
    assert isinstance(result, JudgeFailure) and result.kind is FailureKind.REFUSAL
    assert "I can't assist" in result.detail


def test_a_content_filter_stop_is_a_refusal(openai_server: FakeOpenAIServer, openai_judge: JudgeFactory) -> None:
    openai_server.enqueue(openai_server.completion(None, finish_reason="content_filter"))
    result = openai_judge().ask(PAIR)
    assert isinstance(result, JudgeFailure) and result.kind is FailureKind.REFUSAL


def test_an_answer_cut_off_at_the_token_limit_is_malformed(
    openai_server: FakeOpenAIServer, openai_judge: JudgeFactory
) -> None:
    openai_server.enqueue(openai_server.completion('{"rationale": "Both say', finish_reason="length"))
    result = openai_judge().ask(PAIR)
    assert isinstance(result, JudgeFailure) and result.kind is FailureKind.MALFORMED
    assert "cut off" in result.detail
    assert result.usage.output_tokens == 40


def test_a_message_without_content_is_malformed(openai_server: FakeOpenAIServer, openai_judge: JudgeFactory) -> None:
    openai_server.enqueue(openai_server.completion(None))
    result = openai_judge().ask(PAIR)
    assert isinstance(result, JudgeFailure) and result.kind is FailureKind.MALFORMED


def test_a_completion_without_choices_is_malformed(openai_server: FakeOpenAIServer, openai_judge: JudgeFactory) -> None:
    openai_server.enqueue(
        Reply.json({"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []})
    )
    result = openai_judge().ask(PAIR)
    assert isinstance(result, JudgeFailure) and result.kind is FailureKind.MALFORMED


def test_a_reply_that_is_not_json_is_malformed(openai_server: FakeOpenAIServer, openai_judge: JudgeFactory) -> None:
    openai_server.enqueue(
        Reply(200, b"<html>502 Bad Gateway</html>", {"content-type": "text/html"}),
        Reply(200, b'{"choices": [', {"content-type": "application/json"}),
    )
    judge = openai_judge()
    for _ in range(2):
        result = judge.ask(PAIR)
        assert isinstance(result, JudgeFailure) and result.kind is FailureKind.MALFORMED
    assert len(openai_server.requests) == 2
