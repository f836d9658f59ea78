"""What every model-backed judge shares: the time budget, bounded retries, failing closed.

A provider module supplies two things: ``_attempt`` (one request through its
SDK, returning the raw answer) and ``_classify`` (what an SDK exception
means). ``ModelJudge.ask`` does the rest the same way for every provider and
every question (``judge.question``): the question's prompt to the model of
its tier, the reply through the question's parser.

- ``ZM_JUDGE_TIMEOUT_S`` bounds the whole call, retries and backoff included;
  each attempt gets what is left of it.
- Only transient errors are retried — connection failures, 408, 429, 5xx —
  with exponential backoff (honouring ``retry-after`` up to the policy's
  cap), at most ``RetryPolicy.attempts`` times in all. A timeout is not
  retried: it has spent the budget. A 4xx or a bad answer is not retried: a
  second identical request gets the same answer.
- Whatever goes wrong becomes a ``JudgeFailure`` whose detail has every key
  redacted. The SDKs' own retries are switched off so the budget is ours.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from zero_memory.judge.base import (
    FailureKind,
    Judged,
    JudgeFailure,
    Result,
    Usage,
    model_for,
)
from zero_memory.judge.parse import InvalidAnswer, MalformedAnswer
from zero_memory.judge.prompt import Prompt
from zero_memory.judge.question import Question

A = TypeVar("A")

MAX_DETAIL_CHARS = 300


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Bounded retries for transient errors. ``attempts`` counts the first try."""

    attempts: int = 3
    initial_backoff_s: float = 0.5
    max_backoff_s: float = 8.0

    def backoff(self, retry: int, retry_after_s: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (0 for the first retry)."""
        delay = min(self.initial_backoff_s * 2**retry, self.max_backoff_s)
        if retry_after_s is not None and retry_after_s > delay:
            delay = min(retry_after_s, self.max_backoff_s)
        return delay


@dataclass(frozen=True, slots=True)
class RawAnswer:
    """One provider reply, before validation. ``content`` is None when the reply held no answer."""

    content: str | dict[str, Any] | None
    input_tokens: int = 0
    output_tokens: int = 0
    refusal: str | None = None
    truncated: bool = False
    missing: str = "the reply holds no answer"


@dataclass(frozen=True, slots=True)
class Trouble:
    """What an exception from a provider SDK means for the call."""

    kind: FailureKind
    detail: str
    retryable: bool = False
    retry_after_s: float | None = None


class ModelJudge:
    """A judge that asks a model over HTTP. Subclasses implement ``_attempt`` and ``_classify``."""

    provider: str = "model"
    offer_mode = False

    def __init__(
        self,
        *,
        model: str,
        fast_model: str,
        timeout_s: float,
        extract_model: str | None = None,
        retry: RetryPolicy | None = None,
        secrets: Iterable[str | None] = (),
        unusable: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.model = model
        self.fast_model = fast_model
        self.extract_model = extract_model or fast_model
        self.timeout_s = timeout_s
        self.retry = retry or RetryPolicy()
        self._secrets = tuple(s for s in secrets if s)
        self._unusable = unusable
        self._sleep = sleep

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, fast_model={self.fast_model!r})"

    def model_for(self, question: Question[Any]) -> str:
        return model_for(question.tier, model=self.model, fast_model=self.fast_model, extract_model=self.extract_model)

    def ask(self, question: Question[A]) -> Result[A]:
        model = self.model_for(question)
        if self._unusable is not None:
            return JudgeFailure(FailureKind.UNAVAILABLE, self._unusable, Usage(model))
        started = time.monotonic()
        answer = self._ask(question.prompt(), model, deadline=started + self.timeout_s)
        latency_ms = round((time.monotonic() - started) * 1000)
        if isinstance(answer, Trouble):
            return JudgeFailure(answer.kind, self._redact(answer.detail), Usage(model, latency_ms=latency_ms))
        usage = Usage(model, answer.input_tokens, answer.output_tokens, latency_ms)
        return self._conclude(question, answer, usage)

    # -- the provider's part -----------------------------------------------

    def _attempt(self, prompt: Prompt, model: str, timeout_s: float) -> RawAnswer:
        """Send one request; raise the SDK's exception on failure."""
        raise NotImplementedError

    def _classify(self, exc: Exception) -> Trouble | None:
        """What ``exc`` means, or None if it is not the provider's doing (a bug: re-raised)."""
        raise NotImplementedError

    # -- shared ------------------------------------------------------------

    def _ask(self, prompt: Prompt, model: str, *, deadline: float) -> RawAnswer | Trouble:
        retry = 0
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return Trouble(FailureKind.TIMEOUT, f"no answer within {self.timeout_s:g} s")
            try:
                return self._attempt(prompt, model, remaining)
            except Exception as exc:
                trouble = self._classify(exc)
                if trouble is None:
                    raise
            if trouble.kind is FailureKind.TIMEOUT:
                return Trouble(FailureKind.TIMEOUT, f"no answer within {self.timeout_s:g} s")
            attempts = retry + 1
            if not trouble.retryable or attempts >= self.retry.attempts:
                return _after(trouble, attempts)
            delay = self.retry.backoff(retry, trouble.retry_after_s)
            if time.monotonic() + delay >= deadline:
                return _after(trouble, attempts)
            self._sleep(delay)
            retry += 1

    def _conclude(self, question: Question[A], answer: RawAnswer, usage: Usage) -> Result[A]:
        def failure(kind: FailureKind, detail: str) -> JudgeFailure:
            return JudgeFailure(kind, self._redact(detail), usage)

        if answer.refusal is not None:
            return failure(FailureKind.REFUSAL, f"the model declined: {answer.refusal}")
        if answer.content is None:
            return failure(FailureKind.MALFORMED, answer.missing)
        try:
            return Judged(question.parse(answer.content), usage)
        except MalformedAnswer as exc:
            cut = " (the reply was cut off at the token limit)" if answer.truncated else ""
            return failure(FailureKind.MALFORMED, f"{exc}{cut}")
        except InvalidAnswer as exc:
            return failure(FailureKind.INVALID_VERDICT, str(exc))

    def _redact(self, detail: str) -> str:
        return redact(detail, self._secrets)


def token_count(usage: object, name: str) -> int:
    """A token count from a provider's usage object; 0 unless it is a sane integer."""
    value = getattr(usage, name, None)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return 0


def _after(trouble: Trouble, attempts: int) -> Trouble:
    if attempts < 2:
        return trouble
    return Trouble(trouble.kind, f"{trouble.detail} (after {attempts} attempts)")


_KEYLIKE = re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-*.]{6,}|(?<=Bearer )\S+", re.IGNORECASE)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` fit for a log: known secrets and anything shaped like a key removed, then capped.

    Providers echo keys back in their errors ("Incorrect API key provided:
    sk-…"), so details are redacted even though we never put a key in them.
    """
    for secret in secrets:
        if len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    text = _KEYLIKE.sub("[redacted]", text)
    text = " ".join(text.split())
    return text if len(text) <= MAX_DETAIL_CHARS else text[: MAX_DETAIL_CHARS - 1] + "…"


# -- the two Stainless SDKs (openai, anthropic) raise the same family of errors


@dataclass(frozen=True, slots=True)
class SdkErrors:
    """One SDK's exception classes, so one classifier serves both."""

    base: type[Exception]
    timeout: type[Exception]
    connection: type[Exception]
    status: type[Exception]


AUTH_HINT = "check ZM_JUDGE_API_KEY, or the owner's own key (`zm user key set`)"


def classify_sdk_error(exc: Exception, errors: SdkErrors) -> Trouble | None:
    if isinstance(exc, errors.timeout):
        return Trouble(FailureKind.TIMEOUT, "the provider did not answer in time")
    if isinstance(exc, errors.connection):
        cause = type(exc.__cause__).__name__ if exc.__cause__ is not None else "connection error"
        return Trouble(FailureKind.UNAVAILABLE, f"cannot reach the provider ({cause})", retryable=True)
    if isinstance(exc, errors.status):
        status: int = getattr(exc, "status_code", 0)
        message = _provider_message(getattr(exc, "body", None)) or "no message"
        retry_after = _retry_after(getattr(getattr(exc, "response", None), "headers", None))
        if status == 429:
            return Trouble(FailureKind.RATE_LIMITED, f"HTTP 429: {message}", True, retry_after)
        if status == 408 or status >= 500:
            return Trouble(FailureKind.HTTP_ERROR, f"HTTP {status}: {message}", True, retry_after)
        if status in (401, 403):
            return Trouble(FailureKind.HTTP_ERROR, f"HTTP {status}: {message} — {AUTH_HINT}")
        return Trouble(FailureKind.HTTP_ERROR, f"HTTP {status}: {message}")
    if isinstance(exc, ValueError):
        # The SDK raises the JSON decoder's error for a 200 whose body is broken JSON.
        return Trouble(FailureKind.MALFORMED, f"the reply is not valid JSON ({type(exc).__name__})")
    if isinstance(exc, errors.base):
        return Trouble(FailureKind.UNAVAILABLE, f"the provider SDK refused the call: {exc}")
    return None


def _provider_message(body: object) -> str:
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(body.get("message"), str):
            return str(body["message"])
    return str(body)[:200] if body is not None else ""


def _retry_after(headers: Any) -> float | None:
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            continue
        if seconds >= 0:
            return seconds
    return None
