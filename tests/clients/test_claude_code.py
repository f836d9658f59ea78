"""Real Claude Code, set up with ``zm setup claude-code`` in a temporary home, driven with ``claude -p``.

The scripted model does what a model does in Claude Code: it loads a zero-memory
tool's schema with ToolSearch (Claude Code defers MCP tools) and then calls it,
through the real client, into the real ``zm mcp`` the client started. Each test
is one of the things issue 28 found a real client doing differently from an SDK
client (docs/clients.md, "What each client does, observed").
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from tests.clients.harness import HOOK_CONTEXT, Agents, briefings, claude_calls, project_memories
from tests.fakes.agent_model import say

pytestmark = pytest.mark.clients

EXPORT = "The export endpoint streams CSV in pages of 500 rows, so memory stays flat on big accounts."
BRIEFING_CHARS = 8000  # ZM_BRIEFING_CHARS' default


def remember_args(**extra: str) -> dict[str, str]:
    return {"content": EXPORT, "kind": "decision", **extra}


def test_claude_mcp_list_shows_zero_memory_connected(agents: Agents) -> None:
    repo = agents.repo("work/api")
    agents.zm("setup", "claude-code")
    listed = agents.claude_mcp_list(repo)
    assert listed.returncode == 0, listed.stderr
    assert re.search(r"^zero-memory: \S+/zm mcp - ✔ Connected$", listed.stdout, re.MULTILINE), listed.stdout


def test_a_memory_remembered_in_one_session_is_recalled_in_the_next(agents: Agents) -> None:
    repo = agents.repo("work/api")
    agents.zm("setup", "claude-code")

    agents.model.script(*claude_calls("remember", remember_args(project_hint=str(repo))), say("noted"))
    first = agents.claude("Remember how the export endpoint pages its CSV.", repo)
    assert first.returncode == 0, first.stderr
    assert first.json()["result"] == "noted" and agents.model.pending == 0
    *_, loaded, written = agents.model.tool_results()
    assert loaded == "tool_reference:mcp__zero-memory__remember"
    # What the model is handed is the JSON of the tool's structuredContent, not its text.
    created = json.loads(written)
    assert created["status"] == "created" and created["session"]["attached_project"] == created["scope"]

    agents.model.script(*claude_calls("recall", {"query": "how does export page CSV", "project_hint": str(repo)}))
    second = agents.claude("How does the export endpoint page its CSV?", repo)
    assert second.returncode == 0, second.stderr
    recalled = agents.model.tool_results()[-1]
    *links, answer = recalled.splitlines()
    hits = json.loads(answer)["hits"]
    assert links == [f"[Resource link: {created['id']}] zm://memory/{created['id']} ({EXPORT})"]
    assert hits[0]["id"] == created["id"] and hits[0]["content"] == EXPORT


def test_the_first_unscoped_remember_lands_in_the_repositorys_project(agents: Agents) -> None:
    repo = agents.repo("work/api")
    agents.zm("setup", "claude-code")
    agents.model.script(*claude_calls("remember", remember_args()))
    run = agents.claude("Remember how the export endpoint pages its CSV.", repo)
    assert run.returncode == 0, run.stderr
    written = agents.model.tool_results()[-1]
    assert not written.startswith("validation_failed"), written
    project = next(p for p in json.loads(agents.zm("project", "list", "--json").stdout) if p["path"] == str(repo))
    assert json.loads(written)["scope"] == project["scope"]


def test_session_start_hands_the_model_one_briefing_and_no_call_for_another(agents: Agents) -> None:
    repo = agents.repo("work/api")
    agents.zm("setup", "claude-code")
    run = agents.claude("What is left to do here?", repo)
    assert run.returncode == 0, run.stderr
    first = agents.model.turns()[0].body
    handed = briefings(first)
    assert len(handed) == 1, handed
    hook_context = next(t for t in _texts(first) if t.startswith(HOOK_CONTEXT))
    assert "build_context" not in hook_context.split("# Environment")[0]


def _texts(body: dict[str, object]) -> list[str]:
    texts: list[str] = []
    for message in body.get("messages") or []:  # type: ignore[attr-defined]
        content = message.get("content")
        for block in [{"text": content}] if isinstance(content, str) else content:
            if isinstance(block.get("text"), str):
                texts.append(block["text"])
    return texts


def test_claude_mcp_list_with_capture_hooks_shows_no_failing_hook(agents: Agents) -> None:
    repo = agents.repo("work/api")
    agents.zm("setup", "claude-code", "--capture", env=agents.capture_env())
    listed = agents.claude_mcp_list(repo)
    assert listed.returncode == 0, listed.stderr
    assert "✔ Connected" in listed.stdout
    assert "failed" not in listed.stdout + listed.stderr, listed.stdout + listed.stderr


@pytest.mark.parametrize("length", ["short", "long"])
def test_the_briefing_the_model_receives_fits_the_budget(agents: Agents, length: str) -> None:
    repo = agents.repo("work/api")
    agents.zm("setup", "claude-code")
    agents.seed(repo, project_memories(length))
    agents.model.script(*claude_calls("build_context", {"project_hint": str(repo), "topic": "the export endpoint"}))
    run = agents.claude("Brief me on this repository.", repo)
    assert run.returncode == 0, run.stderr
    (hooked,) = briefings(agents.model.turns()[0].body)
    built = agents.model.tool_results()[-1]
    print(f"{length}: hook briefing {len(hooked)} chars, build_context as the model got it {len(built)} chars")
    assert len(hooked) <= BRIEFING_CHARS
    assert len(built) <= BRIEFING_CHARS


def test_a_session_outside_any_repository_creates_no_project(agents: Agents) -> None:
    downloads = agents.folder("Downloads")
    agents.zm("setup", "claude-code")
    agents.model.script(*claude_calls("build_context", {"project_hint": str(downloads), "topic": "a download"}))
    run = agents.claude("What is in this folder?", downloads)
    assert run.returncode == 0, run.stderr
    assert agents.projects() == []


def test_a_repository_with_the_same_folder_name_does_not_recall_the_others_memories(agents: Agents) -> None:
    first, second = agents.repo("work/api"), agents.repo("clients/acme/api")
    agents.zm("setup", "claude-code")
    agents.model.script(*claude_calls("remember", remember_args(project_hint=str(first))))
    assert agents.claude("Remember how the export endpoint pages its CSV.", first).returncode == 0
    assert json.loads(agents.model.tool_results()[-1])["status"] == "created"

    agents.model.script(*claude_calls("recall", {"query": "how does export page CSV", "project_hint": str(second)}))
    run = agents.claude("How does the export endpoint page its CSV?", second)
    assert run.returncode == 0, run.stderr
    assert EXPORT not in agents.model.tool_results()[-1]
    assert len(agents.projects()) == 2


def test_capture_at_session_end_and_at_compaction_sends_each_word_once(agents: Agents) -> None:
    repo = agents.repo("work/api")
    agents.zm("setup", "claude-code", "--capture", env=agents.capture_env())
    statement = {"content": "Exports are paged at 500 rows.", "kind": "decision", "scope_hint": "project"}
    agents.model.answer_tool("extracted_statements", {"statements": [statement]})
    said = "Let us page the exports at 500 rows from now on."
    agents.model.script(say("Paging exports at 500 rows."))
    first = agents.claude(said, repo)
    assert first.returncode == 0, first.stderr
    compacted = agents.claude("/compact", repo, "--continue")
    assert compacted.returncode == 0, compacted.stderr

    extractions = agents.model.side_requests("extracted_statements")
    assert sum(json.dumps(r.body).count(said) for r in extractions) == 1, len(extractions)
    # The session's end, then the compaction of the continued session (and its end): each sends only
    # what was written since the last send.
    chunks = json.loads(agents.zm("capture", "list", "--json").stdout)
    assert len(chunks) >= 2 and len({c["chunk_hash"] for c in chunks}) == len(chunks)
    assert all(c["status"] == "done" and c["client"] == "claude-code" for c in chunks)
    exported = [json.loads(line) for line in agents.zm("export", "--format", "jsonl").stdout.splitlines()]
    assert [m["content"] for m in exported if m["rank"] == 0] == [statement["content"]]


def test_an_agents_memory_about_code_is_anchored_and_flagged_in_the_next_briefing_once_the_code_changed(
    agents: Agents,
) -> None:
    """Issue 30 as a user meets it: the agent names a function in its memory, the code changes, and the next
    session's briefing (the hook verifies first) tells the agent to re-check it."""
    repo = agents.repo("work/api")
    client = repo / "net" / "client.py"
    client.parent.mkdir()
    client.write_text("def retry(attempts):\n    return min(2**attempts, 30)\n")
    commit = ["git", "-C", str(repo), "-c", "user.name=u", "-c", "user.email=u@example.org", "commit", "-qam"]
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True, timeout=30)
    subprocess.run([*commit, "first"], check=True, timeout=30)
    agents.zm("setup", "claude-code")
    fact = "`retry()` in net/client.py backs off exponentially, capped at 30 s"
    agents.model.script(*claude_calls("remember", {"content": fact, "kind": "fact"}))
    run = agents.claude("Remember how retries back off.", repo)
    assert run.returncode == 0, run.stderr
    written = json.loads(agents.model.tool_results()[-1])
    assert [(a["path"], a["symbol"], a["origin"]) for a in written["anchors"]] == [
        ("net/client.py", "retry", "automatic")
    ]

    client.write_text("def retry(attempts):\n    return min(2**attempts, 60)\n")
    subprocess.run([*commit, "raise the cap"], check=True, timeout=30)
    first = len(agents.model.turns())
    run = agents.claude("What should I know before touching retries?", repo)
    assert run.returncode == 0, run.stderr
    hook_context = next(t for t in _texts(agents.model.turns()[first].body) if t.startswith(HOOK_CONTEXT))
    assert "## Code changed since verified" in hook_context
    assert written["id"] in hook_context.split("## Code changed since verified")[1]


def test_the_docs_example_is_recalled_in_a_persons_words(agents: Agents) -> None:
    """The query of docs/clients.md's recall example, asked in the next session of the memory it is about,
    which holds none of its word forms ("deploy" against "deploys"): the lexical side stems, it comes first."""
    repo = agents.repo("work/ops")
    agents.zm("setup", "claude-code")
    deploys = "Ops: deploys happen on Tuesdays and Thursdays"
    args = {"content": deploys, "kind": "convention", "project_hint": str(repo)}
    agents.model.script(*claude_calls("remember", args), say("noted"))
    assert agents.claude("Remember when we deploy.", repo).returncode == 0
    agents.model.script(*claude_calls("recall", {"query": "how do we deploy", "project_hint": str(repo)}))
    asked = agents.claude("How do we deploy?", repo)
    assert asked.returncode == 0, asked.stderr
    hits = json.loads(agents.model.tool_results()[-1].splitlines()[-1])["hits"]
    assert hits[0]["content"] == deploys
