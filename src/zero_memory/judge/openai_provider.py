"""Any OpenAI-compatible endpoint: OpenAI, Ollama, vLLM, llama.cpp server, LM Studio.

``POST {base_url}/chat/completions`` through the official ``openai`` SDK, with
``response_format`` ``json_schema`` named ``hygiene_verdict`` (or
``portability_verdict``); the verdict object is the message content. No
temperature is sent: OpenAI's reasoning models refuse any but the default,
and the schema already pins the shape of the answer.
"""

from __future__ import annotations

from typing import Any

import openai
from openai.types.chat import ChatCompletion

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

DEFAULT_BASE_URL = "https://api.openai.com/v1"
NO_KEY = "no-key"
"""Sent when no key is configured: local servers (Ollama, llama.cpp …) ignore the header."""

_ERRORS = SdkErrors(
    base=openai.OpenAIError,
    timeout=openai.APITimeoutError,
    connection=openai.APIConnectionError,
    status=openai.APIStatusError,
)


class OpenAIJudge(ModelJudge):
    provider = "openai"

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
        base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        unusable = None
        if not api_key and base_url == DEFAULT_BASE_URL:
            unusable = (
                "no API key for OpenAI: set ZM_JUDGE_API_KEY (or OPENAI_API_KEY), "
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
        # Key and URL are always passed, so the SDK never falls back to the
        # environment: settings are read once, at the edge.
        self._client = openai.OpenAI(
            api_key=api_key or NO_KEY,
            base_url=base_url,
            max_retries=0,
            timeout=timeout_s,
        )

    def _attempt(self, prompt: Prompt, model: str, timeout_s: float) -> RawAnswer:
        completion: Any = self._client.chat.completions.create(
            model=model,
            messages=[
                {"role": "system", "content": prompt.system},
                {"role": "user", "content": prompt.user},
            ],
            response_format={
                "type": "json_schema",
                "json_schema": {
                    "name": prompt.schema_name,
                    "description": prompt.description,
                    "schema": prompt.schema,
                    "strict": True,
                },
            },
            timeout=timeout_s,
        )
        return _answer(completion)

    def _classify(self, exc: Exception) -> Trouble | None:
        return classify_sdk_error(exc, _ERRORS)


def _answer(completion: Any) -> RawAnswer:
    # The SDK does not validate replies: a server that answers 200 with HTML
    # hands back a str, one that leaves out fields a half-built object.
    if not isinstance(completion, ChatCompletion):
        return RawAnswer(None, missing="the reply is not a chat completion")
    usage = getattr(completion, "usage", None)
    tokens_in = token_count(usage, "prompt_tokens")
    tokens_out = token_count(usage, "completion_tokens")
    choices = getattr(completion, "choices", None) or []
    if not choices:
        return RawAnswer(None, tokens_in, tokens_out, missing="the reply has no choices")
    choice = choices[0]
    message = getattr(choice, "message", None)
    finish_reason = getattr(choice, "finish_reason", None)
    refusal = getattr(message, "refusal", None)
    if refusal is None and finish_reason == "content_filter":
        refusal = "stopped by the provider's content filter"
    content = getattr(message, "content", None)
    return RawAnswer(
        content if isinstance(content, str) else None,
        tokens_in,
        tokens_out,
        refusal=str(refusal) if refusal is not None else None,
        truncated=finish_reason == "length",
        missing="the reply's message has no content",
    )
