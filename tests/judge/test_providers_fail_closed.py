"""Every way a provider can go wrong ends in a typed failure, never in a verdict.

Each test runs against both providers, through their real SDKs, over HTTP to
a fake server on 127.0.0.1.
"""

from __future__ import annotations

import logging
import socket
import time
from pathlib import Path

import pytest

from tests.fakes.server import Reply
from tests.judge.conftest import OWNER_KEY, PAIR, SERVER_KEY, Provider, settings_for
from zero_memory.judge.base import FailureKind, Judged, JudgeFailure
from zero_memory.judge.factory import build_judge
from zero_memory.judge.provider import RetryPolicy


def failure_of(provider: Provider, *replies: Reply, **judge_options: object) -> JudgeFailure:
    provider.server.enqueue(*replies)
    result = provider.judge(**judge_options).ask(PAIR)  # type: ignore[arg-type]
    assert isinstance(result, JudgeFailure), result
    return result


@pytest.mark.parametrize(
    ("verdict", "confidence"),
    [
        ("Duplicate", 0.9),
        ("merge", 0.9),
        ("unjudged", 0.9),
        ("duplicate", 1.5),
        ("duplicate", -0.2),
        ("duplicate", "0.9"),
        ("duplicate", None),
    ],
)
def test_an_answer_outside_the_contract_is_an_invalid_verdict(
    provider: Provider, verdict: str, confidence: object
) -> None:
    failure = failure_of(provider, provider.server.verdict(verdict, confidence))
    assert failure.kind is FailureKind.INVALID_VERDICT
    assert failure.usage.input_tokens > 0, "tokens were spent and are still counted"
    assert len(provider.server.requests) == 1, "a bad answer is not retried"


def test_a_refusal_is_a_failure(provider: Provider) -> None:
    assert failure_of(provider, provider.server.refusal()).kind is FailureKind.REFUSAL


@pytest.mark.parametrize("status", [400, 404, 422])
def test_a_client_error_fails_at_once_without_retry(provider: Provider, status: int) -> None:
    failure = failure_of(provider, provider.server.error(status, "model not found"))
    assert failure.kind is FailureKind.HTTP_ERROR
    assert f"HTTP {status}" in failure.detail and "model not found" in failure.detail
    assert len(provider.server.requests) == 1


def test_a_rejected_key_fails_with_a_hint_and_without_retry(provider: Provider) -> None:
    failure = failure_of(provider, provider.server.error(401, "invalid x-api-key"))
    assert failure.kind is FailureKind.HTTP_ERROR
    assert "zm user key set" in failure.detail
    assert len(provider.server.requests) == 1


def test_a_server_error_is_retried_then_answered(provider: Provider) -> None:
    server = provider.server
    server.enqueue(server.error(500), server.error(503), server.verdict("unrelated", 0.8))
    result = provider.judge().ask(PAIR)
    assert isinstance(result, Judged)
    assert len(server.requests) == 3


def test_server_errors_beyond_the_retry_budget_fail(provider: Provider) -> None:
    server = provider.server
    failure = failure_of(provider, *[server.error(502, "bad gateway")] * 5)
    assert failure.kind is FailureKind.HTTP_ERROR
    assert "after 3 attempts" in failure.detail
    assert len(server.requests) == 3


def test_rate_limiting_honours_retry_after_then_fails_as_rate_limited(provider: Provider) -> None:
    server = provider.server
    failure = failure_of(provider, *[server.error(429, "slow down", headers={"retry-after-ms": "20"})] * 3)
    assert failure.kind is FailureKind.RATE_LIMITED
    assert len(server.requests) == 3


def test_a_rate_limit_that_lifts_is_only_a_delay(provider: Provider) -> None:
    server = provider.server
    server.enqueue(server.error(429, headers={"retry-after": "0"}), server.verdict())
    assert isinstance(provider.judge().ask(PAIR), Judged)


def test_a_dropped_connection_is_retried(provider: Provider) -> None:
    server = provider.server
    server.enqueue(Reply(drop=True), server.verdict())
    assert isinstance(provider.judge().ask(PAIR), Judged)
    assert len(server.requests) == 2


def test_an_unreachable_provider_is_unavailable(provider: Provider, tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}" + ("/v1" if provider.name == "openai" else "")
    judge = build_judge(settings_for(provider.name, url, tmp_path), retry=RetryPolicy(2, 0.01, 0.01))
    result = judge.ask(PAIR)
    assert isinstance(result, JudgeFailure) and result.kind is FailureKind.UNAVAILABLE
    assert "after 2 attempts" in result.detail


def test_a_slow_answer_times_out_within_the_budget_and_is_not_retried(provider: Provider) -> None:
    server = provider.server
    started = time.monotonic()
    failure = failure_of(provider, server.verdict().delayed(3), ZM_JUDGE_TIMEOUT_S="0.3")
    elapsed = time.monotonic() - started
    assert failure.kind is FailureKind.TIMEOUT
    assert "0.3 s" in failure.detail
    assert 0.25 < elapsed < 1.5
    assert len(server.requests) == 1


def test_the_time_budget_covers_retries_and_backoff(provider: Provider) -> None:
    """A retry whose backoff would outlast ZM_JUDGE_TIMEOUT_S is not attempted."""
    server = provider.server
    slow_backoff = RetryPolicy(attempts=5, initial_backoff_s=2.0, max_backoff_s=2.0)
    started = time.monotonic()
    failure = failure_of(provider, server.error(503), server.verdict(), retry=slow_backoff, ZM_JUDGE_TIMEOUT_S="0.5")
    assert failure.kind is FailureKind.HTTP_ERROR
    # A retry would have slept its 2 s backoff first; how much less than that depends on the machine's load.
    assert time.monotonic() - started < 2.0
    assert len(server.requests) == 1


def test_a_failure_counts_its_latency_and_the_model_asked(provider: Provider) -> None:
    failure = failure_of(provider, provider.server.error(400))
    assert failure.usage.model == "judge-strong-1"
    assert failure.usage.latency_ms >= 0
    assert failure.outcome == "http_error"


def test_a_key_echoed_by_the_provider_never_reaches_the_failure(provider: Provider) -> None:
    echo = f"Incorrect API key provided: {OWNER_KEY}. Bearer {OWNER_KEY}"
    failure = failure_of(provider, provider.server.error(401, echo), api_key=OWNER_KEY)
    assert OWNER_KEY not in failure.detail
    assert OWNER_KEY[-10:] not in failure.detail
    assert "[redacted]" in failure.detail


def test_keys_never_appear_in_the_judges_repr(provider: Provider) -> None:
    judge = provider.judge(api_key=OWNER_KEY)
    assert OWNER_KEY not in repr(judge) and SERVER_KEY not in repr(judge)


def test_keys_never_appear_in_logs_even_at_debug_level(provider: Provider, caplog: pytest.LogCaptureFixture) -> None:
    server = provider.server
    server.enqueue(server.verdict(), server.error(500), server.error(401, f"bad key {OWNER_KEY}"))
    with caplog.at_level(logging.DEBUG):
        judge = provider.judge(api_key=OWNER_KEY)
        judge.ask(PAIR)
        judge.ask(PAIR)
    assert caplog.records, "the SDKs log at debug level; the test must see them"
    assert OWNER_KEY not in caplog.text


@pytest.mark.parametrize(
    "body",
    [b"[]", b'"text"', b"null", b'{"choices": "x", "content": "x"}', b'{"choices": [null], "content": [null]}'],
)
def test_a_reply_of_the_wrong_shape_is_malformed_never_an_exception(provider: Provider, body: bytes) -> None:
    failure = failure_of(provider, Reply(200, body, {"content-type": "application/json"}))
    assert failure.kind is FailureKind.MALFORMED


def test_token_counts_that_are_not_integers_count_as_zero(provider: Provider) -> None:
    reply = provider.server.verdict()
    body = dict(reply.body)  # type: ignore[arg-type]
    body["usage"] = {"prompt_tokens": "12", "completion_tokens": None, "input_tokens": "12", "output_tokens": -3}
    provider.server.enqueue(Reply.json(body))
    result = provider.judge().ask(PAIR)
    assert isinstance(result, Judged)
    assert (result.usage.input_tokens, result.usage.output_tokens) == (0, 0)
