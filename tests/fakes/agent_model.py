"""A scripted model for the real coding agents: Claude Code's ``/v1/messages`` and Codex's ``/v1/responses``.

    with FakeAgentModel() as model:
        model.script(call("mcp__zero-memory__remember", {"content": "..."}), say("done"))
        run claude -p ... with ANTHROPIC_BASE_URL=model.url
        assert "created" in model.tool_results()[0]

Both clients stream (server-sent events); the fake answers each agent turn
with the next scripted ``Turn`` in the protocol the request came in: a
``call`` becomes a ``tool_use`` block (Anthropic) or a ``function_call`` item
(OpenAI Responses), a ``say`` a text block or message item. A request that is
not an agent turn (no tools offered, or not streamed: a title, a quota probe)
gets a short text answer and takes nothing from the script; a turn asked for
after the script ran out gets ``say("done")``, so a client never hangs on an
unscripted request. A ToolSearch that Claude Code answers with "still
connecting" (``zm mcp`` has not answered yet) is asked again, as Claude Code
tells the model to, with the fake's answer held back a second each time
(the model's own pace). Every request is recorded (``requests``) so a test can
read what the client handed the model: the tools it offered, the briefing, a
tool result.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.server import FakeHTTPServer, RecordedRequest, Reply

__all__ = ["FakeAgentModel", "RecordedRequest", "Turn", "call", "say"]

# Claude Code's ToolSearch result while an MCP server has not answered yet.
STILL_CONNECTING = "No matching deferred tools found. Some MCP servers are still connecting"


@dataclass(frozen=True, slots=True)
class Turn:
    """One answer of the model: call ``tool`` with ``arguments``, or say ``text``.

    ``namespace`` is for Codex, which offers an MCP server's tools as one
    namespace (``mcp__zero_memory``) of plain-named functions.
    """

    text: str = ""
    tool: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    namespace: str = ""


def call(tool: str, arguments: dict[str, Any] | None = None, *, namespace: str = "") -> Turn:
    return Turn(tool=tool, arguments=arguments or {}, namespace=namespace)


def say(text: str) -> Turn:
    return Turn(text=text)


def _sse(events: list[dict[str, Any]]) -> Reply:
    body = "".join(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n" for event in events)
    return Reply(body=body.encode(), headers={"content-type": "text/event-stream", "cache-control": "no-cache"})


class FakeAgentModel(FakeHTTPServer):
    """The model behind a real agent: scripted turns, every request recorded."""

    def __init__(self) -> None:
        super().__init__()
        self._turns: deque[Turn] = deque()
        self._script_lock = threading.Lock()
        self._ids = itertools.count(1)
        self._side_tools: dict[str, dict[str, Any]] = {}
        self._last: Turn | None = None
        self.respond_with(self._answer)

    def script(self, *turns: Turn) -> None:
        """The agent's next turns, in order."""
        with self._script_lock:
            self._turns.extend(turns)

    def answer_tool(self, tool: str, arguments: dict[str, Any]) -> None:
        """Answer every request that is not an agent turn and offers ``tool`` (e.g. capture's extraction
        call, ``extracted_statements``) by calling it with ``arguments``."""
        with self._script_lock:
            self._side_tools[tool] = arguments

    def side_requests(self, tool: str) -> list[RecordedRequest]:
        """The requests that were not agent turns and offered ``tool``."""
        return [r for r in self.requests if not _is_turn(r) and tool in _tool_names(r.body)]

    @property
    def pending(self) -> int:
        """Scripted turns not asked for yet."""
        with self._script_lock:
            return len(self._turns)

    # -- reading what the client sent ---------------------------------------

    def turns(self) -> list[RecordedRequest]:
        """The requests that were agent turns, in order."""
        return [r for r in self.requests if _is_turn(r)]

    def tool_results(self) -> list[str]:
        """The text of every tool result the client handed back, in order (both protocols); a result of
        several blocks (Claude Code puts each resource link in a block of its own) has one line each."""
        seen: dict[str, str] = {}
        for request in self.turns():
            for call_id, text in _tool_results(request.body):
                seen.setdefault(call_id, text)
        return list(seen.values())

    # -- answering ------------------------------------------------------------

    def _next_turn(self, body: dict[str, Any]) -> tuple[Turn, bool]:
        """The next scripted turn, or (True) the last one again: a search while a server was still starting."""
        with self._script_lock:
            results = _tool_results(body)
            if self._last is not None and results and results[-1][1].startswith(STILL_CONNECTING):
                return self._last, True
            self._last = self._turns.popleft() if self._turns else say("done")
            return self._last, False

    def _side_turn(self, body: dict[str, Any]) -> Turn:
        with self._script_lock:
            offered = [name for name in _tool_names(body) if name in self._side_tools]
            return call(offered[0], self._side_tools[offered[0]]) if offered else say("ok")

    def _answer(self, request: RecordedRequest) -> Reply:
        path = request.path.split("?")[0]
        body = request.body if isinstance(request.body, dict) else {}
        if path.endswith("/models"):
            return Reply.json({"object": "list", "data": [], "models": []})
        turn, again = self._next_turn(body) if _is_turn(request) else (self._side_turn(body), False)
        n = next(self._ids)
        if path.endswith("/messages/count_tokens"):
            return Reply.json({"input_tokens": 100})
        if path.endswith("/messages"):
            reply = self._anthropic(turn, n, stream=bool(body.get("stream")))
            return reply.delayed(1.0) if again else reply
        if path.endswith("/responses"):
            return self._responses(turn, n)
        return Reply.json({"error": {"message": f"fake model: no endpoint {path}"}}, status=404)

    @staticmethod
    def _anthropic(turn: Turn, n: int, *, stream: bool) -> Reply:
        if turn.tool:
            block: dict[str, Any] = {"type": "tool_use", "id": f"toolu_{n:04d}", "name": turn.tool, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(turn.arguments)}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": turn.text}
            stop = "end_turn"
        usage = {"input_tokens": 100, "output_tokens": 10}
        message = {"id": f"msg_{n:04d}", "type": "message", "role": "assistant", "model": "fake-claude"}
        if not stream:
            full = {**block, "input": turn.arguments} if turn.tool else {**block, "text": turn.text}
            answer = {**message, "content": [full], "stop_reason": stop, "stop_sequence": None, "usage": usage}
            return Reply.json(answer)
        return _sse(
            [
                {"type": "message_start", "message": {**message, "content": [], "stop_reason": None, "usage": usage}},
                {"type": "content_block_start", "index": 0, "content_block": block},
                {"type": "content_block_delta", "index": 0, "delta": delta},
                {"type": "content_block_stop", "index": 0},
                {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": usage},
                {"type": "message_stop"},
            ]
        )

    @staticmethod
    def _responses(turn: Turn, n: int) -> Reply:
        if turn.tool:
            item: dict[str, Any] = {
                "type": "function_call",
                "id": f"fc_{n:04d}",
                "call_id": f"call_{n:04d}",
                "name": turn.tool,
                "arguments": json.dumps(turn.arguments),
                "status": "completed",
            }
            if turn.namespace:
                item["namespace"] = turn.namespace
        else:
            content = [{"type": "output_text", "text": turn.text, "annotations": []}]
            item = {"type": "message", "id": f"msg_{n:04d}", "role": "assistant", "status": "completed"}
            item["content"] = content
        response = {"id": f"resp_{n:04d}", "object": "response", "model": "fake-model", "status": "in_progress"}
        usage = {
            "input_tokens": 100,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 10,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 110,
        }
        return _sse(
            [
                {"type": "response.created", "response": {**response, "output": []}},
                {"type": "response.output_item.added", "output_index": 0, "item": item},
                {"type": "response.output_item.done", "output_index": 0, "item": item},
                {
                    "type": "response.completed",
                    "response": {**response, "status": "completed", "output": [item], "usage": usage},
                },
            ]
        )


def _is_turn(request: RecordedRequest) -> bool:
    """An agent turn: a streamed request that offers the agent its tools."""
    body = request.body if isinstance(request.body, dict) else {}
    if request.path.split("?")[0].endswith("/responses"):
        return True
    return bool(body.get("stream")) and bool(body.get("tools"))


def _tool_names(body: Any) -> list[str]:
    tools = body.get("tools") if isinstance(body, dict) else None
    return [str(tool.get("name")) for tool in tools or [] if isinstance(tool, dict)]


def _tool_results(body: Any) -> list[tuple[str, str]]:
    """(call id, text) of each tool result in a Messages or Responses request body."""
    found: list[tuple[str, str]] = []
    if not isinstance(body, dict):
        return found
    for message in body.get("messages") or []:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_result":
                found.append((block["tool_use_id"], _text(block.get("content"))))
    for item in body.get("input") or []:
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            found.append((item["call_id"], _text(item.get("output"))))
    return found


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text(part) for part in content)
    if isinstance(content, dict):
        if content.get("type") == "tool_reference":
            return f"tool_reference:{content.get('tool_name')}"
        return str(content.get("text") or content.get("content") or "")
    return ""
