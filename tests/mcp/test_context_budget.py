"""The briefing's budget holds for what a client hands the model, measured through the official MCP client.

Claude Code and Codex hand the model the JSON of a tool's ``structuredContent``
(not its text), Claude Code with one block per resource link before it
(docs/clients.md, "What the model receives from a tool"). ``as_the_model_gets_it``
rebuilds that from the answer the server sent: on a store of short memories and
on one of long ones, it stays within ``budget_chars``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp.types import CallToolResult, ResourceLink

from tests.clients.harness import project_memories
from tests.mcp.conftest import ClientPool
from tests.mcp.helpers import text_of, unique, zm

pytestmark = pytest.mark.anyio

BRIEFING_CHARS = 8000  # ZM_BRIEFING_CHARS' default
SECTIONS = ("rules", "open_loops", "memories")


def as_the_model_gets_it(result: CallToolResult) -> str:
    """Claude Code's tool result: a ``[Resource link: name] uri (description)`` line per link, then the JSON
    of the structured content as ``JSON.stringify`` writes it (Codex hands over the JSON alone)."""
    links = [
        f"[Resource link: {block.name}] {block.uri} ({block.description})"
        for block in result.content
        if isinstance(block, ResourceLink)
    ]
    structured = json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":"))
    return "\n".join([*links, structured])


@pytest.mark.parametrize("length", ["short", "long"])
async def test_the_briefing_a_client_hands_the_model_fits_the_budget(
    pool: ClientPool, tmp_path: Path, length: str
) -> None:
    deployment = pool.deployment
    repo = f"/work/repos/{unique('budget').split('[')[1].strip(']')}"
    data = tmp_path / "seed.jsonl"
    data.write_text("".join(json.dumps(memory) + "\n" for memory in project_memories(length)))
    imported = zm({**deployment.env, "ZM_USER": "alice"}, "import", str(data), "--project", repo, "--json")
    assert json.loads(imported.stdout)["imported"] == 40, imported.stdout

    client = await pool.get("alice", "stdio", "auto")
    arguments = {"project_hint": repo, "topic": "the export endpoint", "session_id": unique("session")}
    result = await client.call_tool("build_context", arguments)
    assert not result.is_error, text_of(result)
    briefing = result.structured_content
    assert briefing is not None and briefing["budget_chars"] == BRIEFING_CHARS

    handed = as_the_model_gets_it(result)
    assert len(handed) <= BRIEFING_CHARS, len(handed)
    assert len(text_of(result)) <= BRIEFING_CHARS
    # Within the budget, but not empty: every section shows what fits, and counts the rest.
    counted = {name: len(briefing[name]["items"]) + briefing[name]["omitted"] for name in SECTIONS}
    print(f"{length}: {len(handed)} characters as the model gets them, {counted}")
    assert all(briefing[name]["items"] for name in SECTIONS), counted
    assert counted["rules"] >= 16 and counted["open_loops"] >= 8, counted  # the project's conventions, tasks
