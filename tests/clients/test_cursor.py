"""Cursor has no CLI here: the MCP Inspector's CLI reads the ``~/.cursor/mcp.json`` that ``zm setup cursor`` wrote,
starts the server it names and calls it, as Cursor would."""

from __future__ import annotations

import json

import pytest

from tests.clients.harness import Agents

pytestmark = pytest.mark.clients


def test_the_cursor_file_starts_a_server_that_lists_and_runs_the_tools(agents: Agents) -> None:
    repo = agents.repo("work/api")
    agents.zm("setup", "cursor")
    config = agents.home / ".cursor" / "mcp.json"

    listed = agents.inspector(config, "--method", "tools/list")
    assert listed.returncode == 0, listed.stderr
    tools = {tool["name"]: tool for tool in listed.json()["tools"]}
    assert {"remember", "recall", "build_context", "get_memory", "forget", "close_loop"} <= set(tools)
    assert all(tool["inputSchema"]["type"] == "object" for tool in tools.values())

    content = "The export endpoint streams CSV in pages of 500 rows."
    arguments = [
        "--tool-arg",
        f"content={content}",
        "--tool-arg",
        "kind=decision",
        "--tool-arg",
        f"project_hint={repo}",
    ]
    called = agents.inspector(config, "--method", "tools/call", "--tool-name", "remember", *arguments)
    assert called.returncode == 0, called.stderr
    written = called.json()
    assert not written.get("isError"), written
    assert written["structuredContent"]["status"] == "created"
    exported = json.loads(agents.zm("export", "--format", "jsonl").stdout.splitlines()[0])
    assert exported["content"] == content
