"""``zm ingest``, ``zm hook claude-code|codex``, ``zm user budget`` and ``zm capture``, run as a user runs them,
with a fake OpenAI-compatible server on 127.0.0.1 as the extraction model."""

from __future__ import annotations

import json
import shutil
import subprocess
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.cli.harness import Result, Zm, environ
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.server import RecordedRequest, Reply

SAMPLE = Path(__file__).parents[1] / "capture" / "data" / "claude_transcript.jsonl"
SESSION = "8f1c2a4e-5b6d-4e7f-9a0b-1c2d3e4f5a6b"
SERVER_KEY = "sk-server-" + "S" * 32
STORED_KEY = "sk-stored-" + "K" * 32
Run = Callable[..., Result]


def extraction(request: RecordedRequest) -> Reply:
    text = FakeOpenAIServer.user_message(request)
    if "make ship" in text:
        ship = "The api deploys with `make ship` from the root."
        return FakeOpenAIServer.statements([{"content": ship, "kind": "convention", "scope_hint": "project"}])
    return FakeOpenAIServer.statements([])


@pytest.fixture
def model() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        server.respond_with(extraction)
        yield server


@pytest.fixture
def run(zm: Zm, model: FakeOpenAIServer) -> Run:
    env = {
        "ZM_JUDGE_PROVIDER": "openai",
        "ZM_JUDGE_BASE_URL": model.base_url,
        "ZM_JUDGE_API_KEY": "sk-test-key-for-the-fake",
        "ZM_EXTRACT_MODEL": "extractor",
        "ZM_JUDGE_TIMEOUT_S": "10",
    }

    def call(*args: str, stdin: str | None = None, extra: dict[str, str] | None = None, binary: bool = False) -> Result:
        return zm(*args, env={**env, **(extra or {})}, input=stdin, binary=binary)

    return call


def sent(model: FakeOpenAIServer) -> list[str]:
    return [FakeOpenAIServer.user_message(r) for r in model.requests]


def test_zm_ingest_stages_a_file_extracts_it_and_reports_what_it_made(
    run: Run, model: FakeOpenAIServer, tmp_path: Path
) -> None:
    talk = tmp_path / "talk.txt"
    talk.write_text("user: how do we deploy?\n\nassistant: make ship, from the root.\n", encoding="utf-8")
    project = str(tmp_path / "api")
    first = run("ingest", str(talk), "--project", project)
    assert first.exit_code == 0, first.stderr
    assert first.stdout.splitlines()[0].startswith("accepted chk_")
    assert "done: 1 statement(s), 1 created, 0 yielded, 0 absorbed, 0 refused" in first.stdout
    assert len(model.requests) == 1 and model.last_request.body["model"] == "extractor"

    again = run("ingest", str(talk), "--project", project, "--json")
    assert again.exit_code == 0, again.stderr
    answer = again.json()
    assert [c["status"] for c in answer["chunks"]] == ["duplicate"]
    assert answer["extraction"][0]["status"] == "done" and answer["extraction"][0]["created"] == 1
    assert len(model.requests) == 1

    listed = run("capture", "list", "--json").json()
    assert [c["status"] for c in listed] == ["done"] and "transcript" not in listed[0]
    recalled = run("recall", "how do we deploy the api", "--project", project, "--json").json()
    assert [h["rank"] for h in recalled["hits"]] == [0]


def test_zm_ingest_from_stdin_needs_a_conversation_id(run: Run, model: FakeOpenAIServer) -> None:
    refused = run("ingest", "-", "--project", "api", stdin="user: hello\n")
    assert refused.exit_code == 1 and refused.stderr.startswith("validation_failed: --conversation")
    ok = run("ingest", "-", "--project", "api", "--conversation", "c-1", stdin="user: hello\n")
    assert ok.exit_code == 0, ok.stderr
    assert sent(model) and "user: hello" in sent(model)[0]


def test_zm_ingest_refuses_a_credential_and_sends_nothing(run: Run, model: FakeOpenAIServer) -> None:
    key = "sk-ant-api03-" + "A" * 40
    refused = run("ingest", "-", "--project", "api", "--conversation", "c", stdin=f"user: my key is {key}\n")
    assert refused.exit_code == 1
    assert refused.stderr.startswith("validation_failed: secret_content_rejected: transcript anthropic_key")
    assert key not in refused.stderr and model.requests == []


def claude_hook_input(transcript: Path, cwd: Path) -> str:
    return json.dumps(
        {
            "session_id": SESSION,
            "transcript_path": str(transcript),
            "cwd": str(cwd),
            "hook_event_name": "PreCompact",
            "trigger": "auto",
            "custom_instructions": "",
        }
    )


def test_the_claude_code_hook_sends_only_new_lines_once_and_survives_a_failed_send(
    run: Run, model: FakeOpenAIServer, tmp_path: Path
) -> None:
    transcript = tmp_path / "session.jsonl"
    shutil.copy(SAMPLE, transcript)
    hook = claude_hook_input(transcript, tmp_path / "api")

    # The real binary, as Claude Code runs it: the hook JSON on its stdin.
    first = run("hook", "claude-code", stdin=hook, binary=True)
    assert first.exit_code == 0, first.stderr
    assert "sent 5 turn(s)" in first.stderr and first.stdout == ""
    [text] = sent(model)
    assert text.count("user: ") == 2 and text.count("assistant: ") == 3
    assert "TOOL_OUTPUT_BODY" not in text and "read the Makefile first" not in text

    nothing = run("hook", "claude-code", stdin=hook)
    assert nothing.exit_code == 0 and "sent 0 turn(s)" in nothing.stderr
    assert len(model.requests) == 1

    with transcript.open("a", encoding="utf-8") as handle:
        message = {"role": "user", "content": [{"type": "text", "text": "The api's health check is /healthz."}]}
        handle.write(json.dumps({"type": "user", "message": message}) + "\n")
    assert run("user", "budget", "set", "0").exit_code == 0
    # A spent budget fails no hook: a quiet exit 0, the reason in the hook log, the lines sent next time.
    failed = run("hook", "claude-code", stdin=hook, binary=True)
    assert (failed.exit_code, failed.stdout, failed.stderr) == (0, "", "")
    assert len(model.requests) == 1
    logged = run("capture", "log", "-n", "1").stdout
    assert f"claude-code PreCompact {SESSION[:8]}: not sent, tried again on the next run: unavailable: " in logged
    assert "budget_exhausted: today's extraction allowance" in logged

    assert run("user", "budget", "clear").exit_code == 0
    retried = run("hook", "claude-code", "--json", stdin=hook)
    assert retried.exit_code == 0, retried.stderr
    report = retried.json()
    assert report["turns"] == 1 and report["offset"] == transcript.stat().st_size
    assert sent(model)[-1].count("user: The api's health check is /healthz.") == 1
    assert len(model.requests) == 2


def test_the_codex_notify_program_sends_each_turn_once(run: Run, model: FakeOpenAIServer, tmp_path: Path) -> None:
    notification = json.dumps(
        {
            "type": "agent-turn-complete",
            "thread-id": "b5f6c1c2-1111-2222-3333-444455556666",
            "turn-id": "12345",
            "cwd": str(tmp_path / "example"),
            "input-messages": ["How do we deploy?"],
            "last-assistant-message": "With make ship.",
        }
    )
    first = run("hook", "codex", notification, binary=True)
    assert first.exit_code == 0, first.stderr
    assert sent(model) == [
        "<transcript>\nuser: How do we deploy?\n\nassistant: With make ship.\n\n\n</transcript>\n\n"
        "Which statements from this excerpt are worth keeping for later sessions?"
    ]
    assert run("hook", "codex", notification).exit_code == 0
    assert len(model.requests) == 1
    other = run("hook", "codex", json.dumps({"type": "approval-requested"}))
    assert other.exit_code == 0 and len(model.requests) == 1


def test_a_claude_code_hook_with_nothing_to_send_or_no_way_to_send_it_exits_0_and_says_why_in_the_log(
    zm_binary: Zm, tmp_path: Path
) -> None:
    """Claude Code runs SessionEnd for `claude mcp list` with a transcript path it never wrote: a failing hook
    there is on the user's screen for nothing. So is one whose database is down: the lines wait for the
    next run."""
    written = tmp_path / "written.jsonl"
    shutil.copy(SAMPLE, written)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    down = {"ZM_DATABASE_URL": "postgresql://zm:hunter2@127.0.0.1:1/zm"}
    cases = [
        (tmp_path / "never-written.jsonl", {}, f"nothing sent: no transcript at {tmp_path / 'never-written.jsonl'}"),
        (empty, {}, f"nothing sent: the transcript {empty} is empty"),
        (written, down, "not sent, tried again on the next run: unavailable: cannot connect to PostgreSQL"),
    ]
    assert zm_binary("capture", "log").stdout.startswith("no hook has run yet (the log is ")
    for transcript, env, _ in cases:
        event = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(tmp_path)}
        done = zm_binary("hook", "claude-code", input=json.dumps({**event, "hook_event_name": "SessionEnd"}), env=env)
        assert (done.exit_code, done.stdout, done.stderr) == (0, "", "")
    lines = zm_binary("capture", "log").stdout.splitlines()
    assert len(lines) == 3
    for line, (_, _, outcome) in zip(lines, cases, strict=True):
        assert f"Z claude-code SessionEnd {SESSION[:8]}: {outcome}" in line
    assert "hunter2" not in "".join(lines)
    assert (tmp_path / "zm-home" / "hooks" / "hooks.log").read_text().splitlines() == lines


def test_the_codex_notify_program_with_its_database_down_exits_0_logs_it_and_sends_the_turn_next_time(
    run: Run, model: FakeOpenAIServer, tmp_path: Path
) -> None:
    def turn(number: int, words: str) -> str:
        ids = {"thread-id": "t-1", "turn-id": str(number), "cwd": str(tmp_path / "api")}
        return json.dumps({"type": "agent-turn-complete", **ids, "input-messages": [words]})

    down = {"ZM_DATABASE_URL": "postgresql://zm@127.0.0.1:1/zm"}
    done = run("hook", "codex", turn(1, "We ship with make ship."), extra=down, binary=True)
    assert (done.exit_code, done.stdout, done.stderr) == (0, "", "")
    [line] = run("capture", "log").stdout.splitlines()
    assert "codex agent-turn-complete t-1: not sent, tried again on the next run: unavailable: cannot connect" in line
    assert model.requests == []

    assert run("hook", "codex", turn(2, "And the health check is /healthz."), binary=True).exit_code == 0
    [text] = sent(model)
    assert "user: We ship with make ship." in text and "user: And the health check is /healthz." in text


def test_bad_hook_input_fails_with_one_line(run: Run) -> None:
    for stdin in ("not json", "[]", json.dumps({"session_id": "s"})):
        result = run("hook", "claude-code", stdin=stdin)
        assert result.exit_code == 1 and result.stderr.startswith("validation_failed:"), result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_zm_user_budget_shows_sets_and_clears_an_allowance(run: Run) -> None:
    shown = run("user", "budget", "show", "--json", extra={"ZM_EXTRACT_DAILY_TOKENS": "50000"})
    assert shown.exit_code == 0, shown.stderr
    assert {k: shown.json()[k] for k in ("daily_tokens", "source", "spent_today")} == {
        "daily_tokens": 50_000,
        "source": "server",
        "spent_today": 0,
    }
    assert run("user", "add", "bob").exit_code == 0
    assert run("user", "budget", "set", "1200", "--user", "bob").exit_code == 0
    bob = run("user", "budget", "show", "--user", "bob")
    assert "bob: 0 of 1,200 tokens spent today, their own" in bob.stdout
    assert run("user", "budget", "set", "-3", "--user", "bob").exit_code != 0
    cleared = run("user", "budget", "clear", "--user", "bob", "--json")
    assert cleared.json() == {"user": "bob", "cleared": True}
    missing = run("user", "budget", "set", "10", "--user", "nobody")
    assert missing.exit_code == 1 and missing.stderr.startswith("not_found: no user nobody")


def setup_env(home: Path, model: FakeOpenAIServer) -> dict[str, str]:
    """Where ``zm setup`` runs: the extraction model configured, the server's key in the environment."""
    return {
        "HOME": str(home),
        "ZM_JUDGE_PROVIDER": "openai",
        "ZM_JUDGE_BASE_URL": model.base_url,
        "ZM_EXTRACT_MODEL": "extractor",
        "ZM_JUDGE_API_KEY": SERVER_KEY,
    }


def as_the_client_runs_it(argv: list[str], home: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """The installed hook as a client starts it: no ``ZM_*`` or provider key in its environment."""
    return subprocess.run(
        argv, input=stdin, capture_output=True, text=True, env=environ({"HOME": str(home)}), timeout=300, check=False
    )


def test_setup_claude_code_capture_adds_hooks_that_send_a_session_once_paid_with_the_stored_key(
    zm: Zm, model: FakeOpenAIServer, tmp_path: Path
) -> None:
    home = tmp_path / "me"
    (home / ".claude").mkdir(parents=True)
    theirs = {"hooks": [{"type": "command", "command": "notify-send bye"}]}
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"SessionEnd": [theirs]}}))
    env = setup_env(home, model)

    first = zm("setup", "claude-code", "--capture", "--no-warm", env=env)
    assert first.exit_code == 0, first.stderr
    assert "added: hooks.PreCompact: hook claude-code" in first.stdout
    assert "added: hooks.SessionEnd: hook claude-code" in first.stdout
    again = zm("setup", "claude-code", "--capture", "--no-warm", env=env)
    assert "added" not in again.stdout and again.stdout.count("unchanged:") == 4

    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert settings["hooks"]["SessionEnd"][0] == theirs
    ours = {
        event: [h for g in settings["hooks"][event] for h in g["hooks"] if "hook claude-code" in h["command"]]
        for event in ("PreCompact", "SessionEnd")
    }
    assert [len(hooks) for hooks in ours.values()] == [1, 1]
    [command] = {hook["command"] for hooks in ours.values() for hook in hooks}
    assert {hook["timeout"] for hooks in ours.values() for hook in hooks} == {120}
    assert "ZM_EXTRACT_MODEL=extractor" in command and "ZM_JUDGE_PROVIDER=openai" in command
    for written in (home / ".claude.json", home / ".claude" / "settings.json"):
        assert SERVER_KEY not in written.read_text(), "a provider key is never written to a client's configuration"

    stored = zm("user", "key", "set", env={"ZM_JUDGE_PROVIDER": "openai"}, input=STORED_KEY)
    assert stored.exit_code == 0, stored.stderr
    transcript = tmp_path / "session.jsonl"
    shutil.copy(SAMPLE, transcript)
    hook_input = claude_hook_input(transcript, tmp_path / "api")
    ran = as_the_client_runs_it(["sh", "-c", command], home, hook_input)
    assert ran.returncode == 0, ran.stderr
    assert "sent 5 turn(s)" in ran.stderr
    [request] = model.requests
    assert request.body["model"] == "extractor" and request.api_key == STORED_KEY
    assert "TOOL_OUTPUT_BODY" not in FakeOpenAIServer.user_message(request)

    assert as_the_client_runs_it(["sh", "-c", command], home, hook_input).returncode == 0
    assert len(model.requests) == 1, "a second run sends nothing new"
    recalled = zm("recall", "how do we deploy the api", "--project", str(tmp_path / "api"), "--json").json()
    assert [h["rank"] for h in recalled["hits"]] == [0]


CODEX_TOML = """\
# my Codex settings
model = "o4-mini"

[mcp_servers.docs]
command = "docs-mcp"
"""


def test_setup_codex_capture_sets_notify_once_and_the_program_sends_a_turn(
    zm: Zm, model: FakeOpenAIServer, tmp_path: Path
) -> None:
    home = tmp_path / "me"
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(CODEX_TOML)
    env = setup_env(home, model)

    assert "added: notify: hook codex" in zm("setup", "codex", "--capture", "--no-warm", env=env).stdout
    again = zm("setup", "codex", "--capture", "--no-warm", env=env)
    assert again.exit_code == 0 and again.stdout.count("unchanged:") == 2
    text = config.read_text()
    assert text.startswith("# my Codex settings") and SERVER_KEY not in text
    parsed = tomllib.loads(text)
    assert parsed["model"] == "o4-mini" and parsed["mcp_servers"]["docs"]["command"] == "docs-mcp"
    argv = parsed["notify"]
    assert argv[-2:] == ["hook", "codex"] and "ZM_EXTRACT_MODEL=extractor" in argv

    assert zm("user", "key", "set", env={"ZM_JUDGE_PROVIDER": "openai"}, input=STORED_KEY).exit_code == 0
    turn = {
        "type": "agent-turn-complete",
        "thread-id": "0c9d8e7f-1111-2222-3333-444455556666",
        "turn-id": "1",
        "cwd": str(tmp_path / "api"),
        "input-messages": ["How do we deploy?"],
        "last-assistant-message": "With make ship.",
    }
    ran = as_the_client_runs_it([*argv, json.dumps(turn)], home)
    assert ran.returncode == 0, ran.stderr
    [request] = model.requests
    assert request.api_key == STORED_KEY and "user: How do we deploy?" in FakeOpenAIServer.user_message(request)


def test_setup_capture_never_replaces_another_notify_and_needs_a_model_and_a_hooked_client(
    zm: Zm, model: FakeOpenAIServer, tmp_path: Path
) -> None:
    home = tmp_path / "me"
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    mine = 'notify = ["my-notifier", "--token-file", "/home/me/.notify"]\n'
    config.write_text(mine)
    refused = zm("setup", "codex", "--capture", "--no-warm", env=setup_env(home, model))
    assert refused.exit_code == 1 and refused.stderr.startswith("validation_failed:"), refused.stderr
    assert "Codex runs only one" in refused.stderr and "my-notifier" not in refused.stderr
    assert config.read_text() == mine

    cursor = zm("setup", "cursor", "--capture", "--no-warm", env=setup_env(home, model))
    assert cursor.exit_code == 1 and cursor.stderr.startswith("validation_failed: --capture: cursor has no")
    no_model = zm("setup", "claude-code", "--capture", "--no-warm", env={"HOME": str(home)})
    assert no_model.exit_code == 1 and no_model.stderr.startswith("validation_failed: --capture needs an extraction")
    assert not (home / ".claude.json").exists() and not (home / ".cursor").exists()
    assert model.requests == []
