"""``zm mcp`` answers the handshake and ``tools/list`` from its catalogue, before the server is built, and
every tool works once it is (mcp/stdio_front.py); the official SDK client over stdio, the real binary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

from tests.cli.harness import environ
from tests.mcp.helpers import ZM, call_ok, unique
from zero_memory.mcp import catalogue

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def session(home: Path, project: str) -> tuple[list[dict[str, Any]], str, list[str]]:
    """One client session on a new ``zm mcp``: the tools listed, a remember, the recall of it."""
    params = StdioServerParameters(command=ZM, args=["mcp"], env=environ({"ZM_HOME": str(home)}))
    async with Client(params, mode="legacy") as client:  # type: ignore[arg-type]
        tools = [
            tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in (await client.list_tools()).tools
        ]
        content = unique("The export endpoint streams CSV in pages of 500 rows")
        written = await call_ok(client, "remember", {"content": content, "kind": "fact", "project_hint": project})
        recalled = await call_ok(client, "recall", {"query": "export endpoint CSV pages", "project_hint": project})
    return tools, written["id"], [hit["id"] for hit in recalled["hits"]]


def recorded(home: Path) -> dict[str, Any]:
    return json.loads(catalogue.path(home).read_text())["versions"]


async def test_tools_come_from_the_catalogue_at_once_and_every_tool_works_after_the_load(tmp_path: Path) -> None:
    home, project = tmp_path / "zm-home", str(tmp_path / "api")

    # The first start has no catalogue: the server answers, and its answers are recorded.
    first, written, hits = await session(home, project)
    assert written in hits and {"remember", "recall", "build_context"} <= {tool["name"] for tool in first}
    [(version, answers)] = recorded(home).items()
    assert [tool["name"] for tool in answers["tools"]["tools"]] == [tool["name"] for tool in first]
    assert answers["initialize"]["serverInfo"]["name"] == "zero-memory" and answers["initialize"]["instructions"]

    # The next start lists what the catalogue holds (marked here, to tell it from the server's answer) ...
    marked = json.loads(catalogue.path(home).read_text())
    listed = marked["versions"][version]["tools"]["tools"]
    recall = next(tool for tool in listed if tool["name"] == "recall")
    recall["description"] = "FROM THE CATALOGUE " + recall["description"]
    catalogue.path(home).write_text(json.dumps(marked))
    tools, written, hits = await session(home, project)
    assert next(tool for tool in tools if tool["name"] == "recall")["description"].startswith("FROM THE CATALOGUE ")
    # ... then the server, built meanwhile, serves the calls, and its own answers replace the marked ones.
    assert written in hits
    assert recorded(home) == {version: answers}

    # The catalogue's answers are the server's: the next start lists exactly what the first one got.
    again, _, _ = await session(home, project)
    assert again == first
