"""Real Codex, set up with ``zm setup codex`` in a temporary home, driven with ``codex exec``.

Codex offers an MCP server's tools to the model as one namespace of functions
(``mcp__zero_memory``: ``remember``, ``recall``, ...) in every ``/v1/responses``
request, and hands a tool's answer back as the JSON of its structuredContent.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tests.clients.harness import CODEX_NAMESPACE, Agents, codex_call, project_memories
from tests.fakes.agent_model import say

pytestmark = pytest.mark.clients

EXPORT = "The export endpoint streams CSV in pages of 500 rows, so memory stays flat on big accounts."
BRIEFING_CHARS = 8000  # ZM_BRIEFING_CHARS' default


def offered(agents: Agents, turn: int = 0) -> dict[str, Any]:
    """The zero-memory namespace in that request Codex sent the model, or {} when it was not offered."""
    tools = agents.model.turns()[turn].body["tools"]
    return next((t for t in tools if t.get("name") == CODEX_NAMESPACE), {})


def wait_for_the_server(agents: Agents) -> None:
    """What a user adds to our entry today so Codex waits for zm mcp: ``required`` and a longer start."""
    config = agents.home / ".codex" / "config.toml"
    header = "[mcp_servers.zero-memory]\n"
    text = config.read_text()
    assert header in text, text
    config.write_text(text.replace(header, header + "required = true\nstartup_timeout_sec = 60\n"))


def answer(output: str) -> dict[str, Any]:
    """The tool's JSON from Codex's function_call_output, which leads with the call's wall time."""
    assert output.startswith("Wall time: "), output
    return json.loads(output.split("Output:\n", 1)[1])  # type: ignore[no-any-return]


def test_codex_offers_the_tools_and_a_remembered_memory_is_recalled_next_run(agents: Agents) -> None:
    repo = agents.repo("work/api")
    agents.zm("setup", "codex")
    wait_for_the_server(agents)
    agents.use_fake_model_in_codex()

    agents.model.script(codex_call("remember", {"content": EXPORT, "kind": "decision", "project_hint": str(repo)}))
    first = agents.codex("Remember how the export endpoint pages its CSV.", repo)
    assert first.returncode == 0, first.stderr
    namespace = offered(agents)
    names = {tool["name"] for tool in namespace["tools"]}
    assert {"remember", "recall", "build_context", "get_memory", "forget", "close_loop"} <= names
    assert all(tool["type"] == "function" and tool["parameters"]["type"] == "object" for tool in namespace["tools"])
    created = answer(agents.model.tool_results()[-1])
    assert created["status"] == "created" and created["session"]["attached_project"] == created["scope"]

    agents.model.script(codex_call("recall", {"query": "how does export page CSV", "project_hint": str(repo)}))
    second = agents.codex("How does the export endpoint page its CSV?", repo)
    assert second.returncode == 0, second.stderr
    hits = answer(agents.model.tool_results()[-1])["hits"]
    assert hits[0]["id"] == created["id"] and hits[0]["content"] == EXPORT


def test_codex_set_up_by_zm_setup_alone_offers_the_tools_in_the_first_turn(agents: Agents) -> None:
    """Every run, not most: three in a row (the issue asks for 20 of 20 in a benchmark)."""
    repo = agents.repo("work/api")
    agents.zm("setup", "codex")
    agents.use_fake_model_in_codex()
    for _ in range(3):
        first = len(agents.model.turns())
        agents.model.script(say("done"))
        run = agents.codex("What is left to do here?", repo)
        assert run.returncode == 0, run.stderr
        assert offered(agents, first), [t.get("name") for t in agents.model.turns()[first].body["tools"]]


def test_the_first_unscoped_remember_from_codex_lands_in_the_repositorys_project(agents: Agents) -> None:
    repo = agents.repo("work/api")
    agents.zm("setup", "codex")
    wait_for_the_server(agents)
    agents.use_fake_model_in_codex()
    agents.model.script(codex_call("remember", {"content": EXPORT, "kind": "decision"}))
    run = agents.codex("Remember how the export endpoint pages its CSV.", repo)
    assert run.returncode == 0, run.stderr
    output = agents.model.tool_results()[-1]
    assert "validation_failed" not in output, output
    project = next(p for p in json.loads(agents.zm("project", "list", "--json").stdout) if p["path"] == str(repo))
    assert answer(output)["scope"] == project["scope"]


@pytest.mark.parametrize("length", ["short", "long"])
def test_the_briefing_codex_hands_the_model_fits_the_budget(agents: Agents, length: str) -> None:
    repo = agents.repo("work/api")
    agents.zm("setup", "codex")
    wait_for_the_server(agents)
    agents.use_fake_model_in_codex()
    agents.seed(repo, project_memories(length))
    agents.model.script(codex_call("build_context", {"project_hint": str(repo), "topic": "the export endpoint"}))
    run = agents.codex("Brief me on this repository.", repo)
    assert run.returncode == 0, run.stderr
    built = agents.model.tool_results()[-1].split("Output:\n", 1)[1]
    assert json.loads(built)["budget_chars"] == BRIEFING_CHARS
    print(f"{length}: build_context as Codex hands it to the model: {len(built)} characters")
    assert len(built) <= BRIEFING_CHARS, len(built)


def test_codex_notify_sends_each_finished_turn_to_capture_once(agents: Agents) -> None:
    repo = agents.repo("work/api")
    agents.zm("setup", "codex", "--capture", env=agents.capture_env())
    # Codex hands notify no provider key of its own: the hook pays with the one the user stored.
    agents.zm("user", "key", "set", "--provider", "anthropic", input="sk-ant-fake-key-for-tests\n")
    agents.use_fake_model_in_codex()
    statement = {"content": "Exports are paged at 500 rows.", "kind": "decision", "scope_hint": "project"}
    agents.model.answer_tool("extracted_statements", {"statements": [statement]})
    said = "Let us page the exports at 500 rows from now on."
    agents.model.script(say("Paging exports at 500 rows."))
    run = agents.codex(said, repo)
    assert run.returncode == 0, run.stderr
    # The notify program runs when the turn completes; wait for its chunk to be extracted.
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        chunks = json.loads(agents.zm("capture", "list", "--json").stdout)
        if chunks and all(c["status"] == "done" for c in chunks):
            break
        time.sleep(1)
    assert [(c["client"], c["status"], c["created"]) for c in chunks] == [("codex", "done", 1)], chunks
    extractions = agents.model.side_requests("extracted_statements")
    assert sum(json.dumps(r.body).count(said) for r in extractions) == 1, len(extractions)
    exported = [json.loads(line) for line in agents.zm("export", "--format", "jsonl").stdout.splitlines()]
    assert [m["content"] for m in exported if m["rank"] == 0] == [statement["content"]]
