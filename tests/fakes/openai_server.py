"""A fake OpenAI-compatible endpoint: ``POST {base_url}/chat/completions``.

    with FakeOpenAIServer() as server:
        server.enqueue(server.verdict("duplicate", 0.97))
        judge = build_judge(settings.with_changes(judge_base_url=server.base_url, ...))
        ...
        assert server.last_request.body["response_format"]["json_schema"]["name"] == "hygiene_verdict"

The reply builders are static, so a ``respond_with`` function can use them too.
"""

from __future__ import annotations

import json
import time
from typing import Any

from tests.fakes.server import FakeHTTPServer, RecordedRequest, Reply

__all__ = ["FakeOpenAIServer", "RecordedRequest", "Reply"]


class FakeOpenAIServer(FakeHTTPServer):
    @property
    def base_url(self) -> str:
        """What ``ZM_JUDGE_BASE_URL`` is set to for this server."""
        return f"{self.url}/v1"

    # -- reply builders ----------------------------------------------------

    @staticmethod
    def completion(
        content: str | None,
        *,
        refusal: str | None = None,
        finish_reason: str = "stop",
        model: str = "fake-model",
        prompt_tokens: int = 180,
        completion_tokens: int = 40,
    ) -> Reply:
        """A chat completion whose single choice carries ``content`` (or a refusal)."""
        return Reply.json(
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content, "refusal": refusal},
                        "finish_reason": finish_reason,
                        "logprobs": None,
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            }
        )

    @staticmethod
    def verdict(
        verdict: str = "duplicate",
        confidence: Any = 0.95,
        rationale: str = "Both state the same fact.",
        *,
        prompt_tokens: int = 180,
        completion_tokens: int = 40,
    ) -> Reply:
        answer = {"rationale": rationale, "verdict": verdict, "confidence": confidence}
        return FakeOpenAIServer.completion(
            json.dumps(answer), prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )

    @staticmethod
    def portability(
        portable: Any = True,
        confidence: Any = 0.9,
        rationale: str = "True of the tool, not of this project.",
        *,
        prompt_tokens: int = 120,
        completion_tokens: int = 30,
    ) -> Reply:
        answer = {"rationale": rationale, "portable": portable, "confidence": confidence}
        return FakeOpenAIServer.completion(
            json.dumps(answer), prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )

    @staticmethod
    def statements(
        statements: list[dict[str, Any]], *, prompt_tokens: int = 900, completion_tokens: int = 120
    ) -> Reply:
        """An extraction answer: ``{"statements": [{"content", "kind", "scope_hint"}, …]}``."""
        return FakeOpenAIServer.completion(
            json.dumps({"statements": statements}), prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )

    @staticmethod
    def schema_name(request: RecordedRequest) -> str:
        """Which answer a recorded request asked for: hygiene_verdict, portability_verdict, extracted_statements."""
        return str(request.body["response_format"]["json_schema"]["name"])

    @staticmethod
    def refusal(text: str = "I can't help with that.") -> Reply:
        return FakeOpenAIServer.completion(None, refusal=text)

    @staticmethod
    def error(status: int, message: str = "fake error", headers: dict[str, str] | None = None) -> Reply:
        """An error in OpenAI's shape, e.g. ``error(429, headers={"retry-after-ms": "10"})``."""
        body = {"error": {"message": message, "type": "fake_error", "param": None, "code": None}}
        return Reply.json(body, status=status, headers=headers)

    # -- reading requests --------------------------------------------------

    @staticmethod
    def user_message(request: RecordedRequest) -> str:
        """The text of the user message of a recorded chat completion request."""
        messages = request.body["messages"]
        return next(str(m["content"]) for m in messages if m["role"] == "user")

    @staticmethod
    def system_message(request: RecordedRequest) -> str:
        messages = request.body["messages"]
        return next(str(m["content"]) for m in messages if m["role"] == "system")
