"""The words of a client's transcript: what the user said and what the assistant answered, nothing else.

Claude Code keeps each session as a JSONL file, one entry per line: ``user``
and ``assistant`` entries carry a ``message`` whose ``content`` is a string or
a list of blocks. Only ``text`` blocks are words; ``tool_use``,
``tool_result`` (tool output bodies), ``thinking`` and ``image`` blocks are
left out, as are meta entries (command caveats), side chains (sub-agents)
and every other entry type (summaries, snapshots, system lines).

Codex's ``notify`` program receives one JSON object per finished turn:
``input-messages`` (what the user typed) and ``last-assistant-message``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

Role = Literal["user", "assistant"]
ROLES: tuple[Role, ...] = ("user", "assistant")

# Text the client itself puts into a user message: reminders for the model, the output of a local
# command (/help, /cost …), the name of a slash command. Not the user's words.
_CLIENT_TEXT = re.compile(
    r"<(system-reminder|local-command-stdout|local-command-stderr|command-name|command-message|command-args)>"
    r".*?</\1>",
    re.DOTALL,
)


@dataclass(frozen=True, slots=True)
class Turn:
    role: Role
    text: str


def claude_code_turns(lines: Iterable[str]) -> list[Turn]:
    """The user and assistant words of Claude Code transcript lines, in order; unreadable lines are skipped."""
    turns = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict) or entry.get("isMeta") or entry.get("isSidechain"):
            continue
        role = entry.get("type")
        message = entry.get("message")
        if role not in ROLES or not isinstance(message, dict):
            continue
        text = _words(message.get("content"))
        if text:
            turns.append(Turn(role, text))
    return turns


def codex_turns(notification: Mapping[str, Any]) -> list[Turn]:
    """The words of one finished Codex turn (a ``notify`` payload of type ``agent-turn-complete``)."""
    turns: list[Turn] = []
    inputs = notification.get("input-messages")
    for message in inputs if isinstance(inputs, list) else []:
        if isinstance(message, str) and message.strip():
            turns.append(Turn("user", message.strip()))
    answer = notification.get("last-assistant-message")
    if isinstance(answer, str) and answer.strip():
        turns.append(Turn("assistant", answer.strip()))
    return turns


def render(turns: Iterable[Turn]) -> str:
    """Turns as the plain text a chunk carries: ``user: …`` and ``assistant: …``, a blank line between."""
    return "".join(f"{turn.role}: {turn.text}\n\n" for turn in turns)


def _words(content: Any) -> str:
    if isinstance(content, str):
        parts = [content]
    elif isinstance(content, list):
        parts = [
            block["text"]
            for block in content
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
        ]
    else:
        return ""
    return "\n".join(cleaned for cleaned in (_CLIENT_TEXT.sub("", part).strip() for part in parts) if cleaned)
