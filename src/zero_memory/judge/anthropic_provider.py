"""Anthropic's Messages API through the official ``anthropic`` SDK.

One tool, ``hygiene_verdict`` (or ``portability_verdict``), whose input
schema is the verdict's schema, forced with ``tool_choice``: the verdict
object is the tool call's input. A reply that stops for ``refusal`` is a
refusal; one with no call to that tool is malformed.
"""

from __future__ import annotations

from typing import Any

import anthropic
from anthropic.types import Message

from zero_memory.judge.prompt import Prompt
from zero_memory.judge.provider import (
    ModelJudge,
    RawAnswer,
    RetryPolicy,
    SdkErrors,
    Trouble,
    classify_sdk_error,
    token_count,
)

DEFAULT_BASE_URL = "https://api.anthropic.com"

_ERRORS = SdkErrors(
    base=anthropic.AnthropicError,
    timeout=anthropic.APITimeoutError,
    connection=anthropic.APIConnectionError,
    status=anthropic.APIStatusError,
)


class AnthropicJudge(ModelJudge):
    provider = "anthropic"

    def __init__(
        self,
        *,
        api_key: str | None,
        base_url: str | None,
        model: str,
        fast_model: str,
        timeout_s: float,
        extract_model: str | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        unusable = None
        if not api_key:
            unusable = (
                "no API key for Anthropic: set ZM_JUDGE_API_KEY (or ANTHROPIC_API_KEY), "
                "or store your own with `zm user key set`"
            )
        super().__init__(
            model=model,
            fast_model=fast_model,
            timeout_s=timeout_s,
            extract_model=extract_model,
            retry=retry,
            secrets=[api_key],
            unusable=unusable,
        )
        # An explicit key stops the SDK from looking for credentials in the
        # environment or in profile files on disk.
        self._client = anthropic.Anthropic(
            api_key=api_key or "missing",
            base_url=(base_url or DEFAULT_BASE_URL).rstrip("/"),
            max_retries=0,
            timeout=timeout_s,
        )

    def _attempt(self, prompt: Prompt, model: str, timeout_s: float) -> RawAnswer:
        message: Any = self._client.messages.create(
            model=model,
            max_tokens=prompt.max_tokens,
            system=prompt.system,
            messages=[{"role": "user", "content": prompt.user}],
            tools=[
                {
                    "name": prompt.schema_name,
                    "description": prompt.description,
                    "input_schema": prompt.schema,
                }
            ],
            tool_choice={"type": "tool", "name": prompt.schema_name},
            timeout=timeout_s,
        )
        return _answer(message, prompt.schema_name)

    def _classify(self, exc: Exception) -> Trouble | None:
        return classify_sdk_error(exc, _ERRORS)


def _answer(message: Any, tool_name: str) -> RawAnswer:
    if not isinstance(message, Message):
        return RawAnswer(None, missing="the reply is not a Messages API message")
    usage = getattr(message, "usage", None)
    tokens_in = token_count(usage, "input_tokens")
    tokens_out = token_count(usage, "output_tokens")
    stop_reason = getattr(message, "stop_reason", None)
    if stop_reason == "refusal":
        return RawAnswer(None, tokens_in, tokens_out, refusal="stop_reason refusal")
    for block in getattr(message, "content", None) or []:
        if getattr(block, "type", None) == "tool_use" and getattr(block, "name", None) == tool_name:
            tool_input = getattr(block, "input", None)
            return RawAnswer(
                tool_input if isinstance(tool_input, dict) else None,
                tokens_in,
                tokens_out,
                truncated=stop_reason == "max_tokens",
                missing=f"the {tool_name} call's input is not a JSON object",
            )
    return RawAnswer(
        None,
        tokens_in,
        tokens_out,
        truncated=stop_reason == "max_tokens",
        missing=f"the reply does not call {tool_name} (stop_reason {stop_reason})",
    )
