"""``zm context``, ``zm loops``, ``zm pin``/``unpin`` as a user runs them, and ``zm context --hook`` as
Claude Code runs it at the start of a session."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from tests.cli.harness import Zm
from tests.memory.helpers import write
from zero_memory.access.caller import Caller
from zero_memory.access.users import ensure_local_user
from zero_memory.bootstrap import build_app
from zero_memory.clock import utcnow
from zero_memory.embedding import Embedder
from zero_memory.settings import Settings


def test_an_old_open_task_is_briefed_and_listed_until_it_is_closed(zm: Zm, tmp_path: Path, embedder: Embedder) -> None:
    repo = tmp_path / "repos" / "billing"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    sixty_days_ago = utcnow() - timedelta(days=60)
    app = build_app(
        Settings.from_environ({"ZM_HOME": str(tmp_path / "zm-home")}), embedder=embedder, clock=lambda: sixty_days_ago
    )
    try:
        me = Caller(ensure_local_user(app.store, None), client="claude-code")
        task = write(app, me, "Switch invoices to the new PDF renderer", "task", project_hint=str(repo))
    finally:
        app.close()

    listed = zm("loops", "--json")
    assert listed.exit_code == 0, listed.stderr
    loops = listed.json()["loops"]
    assert [lp["id"] for lp in loops] == [task.id]
    assert loops[0]["open_days"] >= 60 and loops[0]["status"] == "open"
    assert "open 60d" in zm("loops").stdout

    # From a subdirectory of the repository: the briefing is the repository's.
    briefing = zm("context", "--project", str(repo / "src"), "--json").json()
    assert briefing["project"] == task.scope
    assert [i["id"] for i in briefing["open_loops"]["items"]] == [task.id]
    text = zm("context", "--project", str(repo), "--topic", "invoices").stdout
    assert task.id in text and "open 60d" in text and len(text) <= 8001

    assert zm("close-loop", task.id, "--note", "renderer shipped").exit_code == 0
    assert zm("loops", "--json").json()["loops"] == []
    assert task.id not in zm("context", "--project", str(repo)).stdout
    closed = zm("loops", "--closed", "--json").json()["loops"]
    assert [lp["id"] for lp in closed] == [task.id] and closed[0]["note"] == "renderer shipped"


def test_pin_and_unpin_from_the_shell(zm: Zm) -> None:
    rule = zm("remember", "Review every migration twice", "--kind", "convention", "--scope", "personal", "--json")
    memory_id = rule.json()["id"]
    assert zm("pin", memory_id, "--json").json() == {"id": memory_id, "pinned": True, "changed": True}
    assert "already" in zm("pin", memory_id).stdout
    briefing = zm("context", "--project", "personal-notes", "--json").json()
    assert briefing["rules"]["items"][0]["id"] == memory_id and briefing["rules"]["items"][0]["pinned"]
    assert "PINNED" in zm("context", "--project", "personal-notes").stdout
    assert zm("unpin", memory_id, "--json").json()["changed"] is True
    assert zm("get", memory_id, "--json").json()["memory"]["pinned"] is False
    missing = zm("pin", "mem_nothing")
    assert missing.exit_code == 1 and missing.stderr.startswith("not_found:")


def test_the_hook_answers_a_session_start_with_the_briefing(zm: Zm, tmp_path: Path) -> None:
    repo = tmp_path / "shop"
    (repo / ".git").mkdir(parents=True)
    task = zm("remember", "Add the refund button", "--kind", "task", "--project", str(repo), "--json").json()
    event = {
        "session_id": "abc123",
        "transcript_path": str(tmp_path / "t.jsonl"),
        "cwd": str(repo),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    done = zm("context", "--hook", input=json.dumps(event))
    assert done.exit_code == 0, done.stderr
    answer = json.loads(done.stdout)
    assert set(answer) == {"hookSpecificOutput"}
    output = answer["hookSpecificOutput"]
    assert output["hookEventName"] == "SessionStart"
    context = output["additionalContext"]
    assert task["id"] in context and "## Open loops" in context
    # One briefing per session, and only promises that hold for the agent's own calls.
    assert "build_context" not in context and "A remember with no scope writes" not in context
    assert context.endswith(f'The repository root, for project_hint: "{repo}".')

    broken = zm("context", "--hook", input="not json")
    assert broken.exit_code == 0
    said = json.loads(broken.stdout)["hookSpecificOutput"]["additionalContext"]
    assert said.startswith("zero-memory: no briefing")
    assert "Z claude-code SessionStart: no briefing: Expecting value" in zm("capture", "log").stdout
