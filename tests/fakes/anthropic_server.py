"""A fake Anthropic Messages endpoint: ``POST {base_url}/v1/messages``.

    with FakeAnthropicServer() as server:
        server.enqueue(server.verdict("b_supersedes_a", 0.96))
        judge = build_judge(settings.with_changes(judge_base_url=server.base_url, ...))
        ...
        assert server.last_request.body["tool_choice"] == {"type": "tool", "name": "hygiene_verdict"}

The reply builders are static, so a ``respond_with`` function can use them too.
"""

from __future__ import annotations

from typing import Any

from tests.fakes.server import FakeHTTPServer, RecordedRequest, Reply

__all__ = ["FakeAnthropicServer", "RecordedRequest", "Reply"]


class FakeAnthropicServer(FakeHTTPServer):
    @property
    def base_url(self) -> str:
        """What ``ZM_JUDGE_BASE_URL`` is set to for this server (the SDK adds ``/v1/messages``)."""
        return self.url

    # -- reply builders ----------------------------------------------------

    @staticmethod
    def message(
        content: list[dict[str, Any]],
        *,
        stop_reason: str = "tool_use",
        model: str = "fake-claude",
        input_tokens: int = 210,
        output_tokens: int = 55,
    ) -> Reply:
        return Reply.json(
            {
                "id": "msg_fake",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": content,
                "stop_reason": stop_reason,
                "stop_sequence": None,
                "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
            }
        )

    @staticmethod
    def tool_use(tool_input: Any, *, name: str = "hygiene_verdict", **message: Any) -> Reply:
        """A message whose one content block calls tool ``name`` with ``tool_input``."""
        block = {"type": "tool_use", "id": "toolu_fake", "name": name, "input": tool_input}
        return FakeAnthropicServer.message([block], **message)

    @staticmethod
    def verdict(
        verdict: str = "duplicate",
        confidence: Any = 0.95,
        rationale: str = "Both state the same fact.",
        **message: Any,
    ) -> Reply:
        answer = {"rationale": rationale, "verdict": verdict, "confidence": confidence}
        return FakeAnthropicServer.tool_use(answer, **message)

    @staticmethod
    def portability(
        portable: Any = True,
        confidence: Any = 0.9,
        rationale: str = "True of the tool, not of this project.",
        **message: Any,
    ) -> Reply:
        answer = {"rationale": rationale, "portable": portable, "confidence": confidence}
        return FakeAnthropicServer.tool_use(answer, name="portability_verdict", **message)

    @staticmethod
    def statements(statements: list[dict[str, Any]], **message: Any) -> Reply:
        """An extraction answer, as a call of the ``extracted_statements`` tool."""
        return FakeAnthropicServer.tool_use({"statements": statements}, name="extracted_statements", **message)

    @staticmethod
    def text(text: str, *, stop_reason: str = "end_turn") -> Reply:
        """A plain text answer: no tool call at all."""
        return FakeAnthropicServer.message([{"type": "text", "text": text}], stop_reason=stop_reason)

    @staticmethod
    def refusal() -> Reply:
        return FakeAnthropicServer.message([], stop_reason="refusal")

    @staticmethod
    def error(
        status: int,
        message: str = "fake error",
        kind: str = "api_error",
        headers: dict[str, str] | None = None,
    ) -> Reply:
        """An error in Anthropic's shape, e.g. ``error(529, kind="overloaded_error")``."""
        body = {"type": "error", "error": {"type": kind, "message": message}}
        return Reply.json(body, status=status, headers=headers)

    # -- reading requests --------------------------------------------------

    @staticmethod
    def user_message(request: RecordedRequest) -> str:
        """The text of the user message of a recorded Messages request."""
        message = next(m for m in request.body["messages"] if m["role"] == "user")
        content = message["content"]
        if isinstance(content, str):
            return content
        return "".join(block.get("text", "") for block in content)

    @staticmethod
    def system_message(request: RecordedRequest) -> str:
        system = request.body["system"]
        if isinstance(system, str):
            return system
        return "".join(block.get("text", "") for block in system)
