"""``zm setup``: one step connects Claude Code, Codex or Cursor, keeps everything else in their files,
and changes nothing the second time; the hook it installs answers a SessionStart with the briefing."""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from pathlib import Path

import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from tests.cli.harness import Result, Zm
from zero_memory.cli.client_config import BRIEFING_MATCHER, HookEntry, ServerEntry, redact
from zero_memory.mcp import catalogue

CLAUDE_JSON = {
    "numStartups": 12,
    "mcpServers": {
        "github": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"]}
    },
    "projects": {"/home/me/api": {"allowedTools": []}},
}
CLAUDE_SETTINGS = {
    "permissions": {"allow": ["Bash(make test)"]},
    "hooks": {
        "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo welcome"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "check-bash.sh"}]}],
    },
}
CODEX_TOML = """\
# my Codex settings
model = "o4-mini"

[mcp_servers.docs]  # the docs server
command = "docs-mcp"
args = ["--stdio"]
"""


def run_setup(zm: Zm, home: Path, *args: str, env: dict[str, str] | None = None, warm: bool = False) -> Result:
    """``zm setup ARGS``; without starting zm mcp ahead unless ``warm`` (the test of that is below)."""
    done = zm("setup", *args, *([] if warm else ["--no-warm"]), env={"HOME": str(home), **(env or {})})
    assert done.exit_code == 0, done.stderr
    return done


def test_claude_code_twice_keeps_other_servers_and_hooks_and_adds_zero_memory_once(zm: Zm, tmp_path: Path) -> None:
    home = tmp_path / "me"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude.json").write_text(json.dumps(CLAUDE_JSON))
    (home / ".claude" / "settings.json").write_text(json.dumps(CLAUDE_SETTINGS))

    first = run_setup(zm, home, "claude-code")
    assert "added: mcpServers.zero-memory" in first.stdout and "added: hooks.SessionStart" in first.stdout
    second = run_setup(zm, home, "claude-code")
    assert "added" not in second.stdout and second.stdout.count("unchanged:") == 2

    config = json.loads((home / ".claude.json").read_text())
    assert config["numStartups"] == 12 and config["projects"] == CLAUDE_JSON["projects"]
    assert config["mcpServers"]["github"] == CLAUDE_JSON["mcpServers"]["github"]
    server = config["mcpServers"]["zero-memory"]
    assert server["type"] == "stdio" and server["args"] == ["mcp"] and Path(server["command"]).name == "zm"
    assert Path(server["command"]).is_absolute() and server["env"]["ZM_HOME"].endswith("zm-home")

    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert settings["permissions"] == CLAUDE_SETTINGS["permissions"]
    assert settings["hooks"]["PreToolUse"] == CLAUDE_SETTINGS["hooks"]["PreToolUse"]
    starts = settings["hooks"]["SessionStart"]
    assert starts[0] == CLAUDE_SETTINGS["hooks"]["SessionStart"][0]
    ours = [h for group in starts for h in group["hooks"] if "context --hook" in h["command"]]
    assert len(starts) == 2 and len(ours) == 1
    assert starts[1] == {"matcher": "startup|clear|compact", "hooks": ours}

    # The installed command, fed Claude Code's SessionStart input, answers with the briefing.
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    task = zm("remember", "Finish the export endpoint", "--kind", "task", "--project", str(repo), "--json").json()
    event = {"session_id": "s-42", "cwd": str(repo), "hook_event_name": "SessionStart", "source": "startup"}
    shell = subprocess.run(
        ["sh", "-c", ours[0]["command"]],
        input=json.dumps(event),
        capture_output=True,
        text=True,
        env={"PATH": os.environ["PATH"], "HOME": str(home)},
        timeout=120,
        check=False,
    )
    assert shell.returncode == 0, shell.stderr
    answer = json.loads(shell.stdout)
    assert answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert task["id"] in answer["hookSpecificOutput"]["additionalContext"]


def test_a_moved_zm_updates_our_entries_and_nothing_else(zm: Zm, tmp_path: Path) -> None:
    home = tmp_path / "me"
    run_setup(zm, home, "claude-code")
    moved = run_setup(zm, home, "claude-code", "--command", "/opt/zm/bin/zm")
    assert moved.stdout.count("updated:") == 2
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    commands = [h["command"] for g in settings["hooks"]["SessionStart"] for h in g["hooks"]]
    assert len(commands) == 1 and "/opt/zm/bin/zm context --hook" in commands[0]


def test_codex_keeps_the_users_comments_and_servers(zm: Zm, tmp_path: Path) -> None:
    home = tmp_path / "me"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(CODEX_TOML)
    assert "added: mcp_servers.zero-memory" in run_setup(zm, home, "codex").stdout
    assert "unchanged: mcp_servers.zero-memory" in run_setup(zm, home, "codex").stdout
    text = (home / ".codex" / "config.toml").read_text()
    assert text.startswith(CODEX_TOML)
    parsed = tomllib.loads(text)
    assert parsed["model"] == "o4-mini" and parsed["mcp_servers"]["docs"]["command"] == "docs-mcp"
    assert parsed["mcp_servers"]["zero-memory"]["args"] == ["mcp"]


def test_cursor_and_print(zm: Zm, tmp_path: Path) -> None:
    home = tmp_path / "me"
    printed = run_setup(zm, home, "cursor", "--print")
    assert not (home / ".cursor").exists()
    assert str(home / ".cursor" / "mcp.json") in printed.stdout and '"zero-memory"' in printed.stdout
    run_setup(zm, home, "cursor")
    written = json.loads((home / ".cursor" / "mcp.json").read_text())
    assert list(written["mcpServers"]) == ["zero-memory"]
    claude = run_setup(zm, home, "claude-code", "--print")
    assert "context --hook" in claude.stdout and not (home / ".claude.json").exists()


def test_printed_to_a_pipe_nothing_is_wrapped_whatever_the_width(zm_binary: Zm, tmp_path: Path) -> None:
    """A narrow COLUMNS (a pytest worker inherits 80 from readline) must not break a path or a snippet a
    script reads from zm's output: only a terminal's lines are wrapped."""
    home = tmp_path / "a-home-directory-whose-path-is-longer-than-the-narrow-width"
    printed = run_setup(zm_binary, home, "cursor", "--print", env={"COLUMNS": "40"})
    assert f"# {home / '.cursor' / 'mcp.json'}\n" in printed.stdout
    assert f'"ZM_HOME": "{tmp_path / "zm-home"}"' in printed.stdout


def test_a_file_that_does_not_parse_is_refused_and_left_alone(zm: Zm, tmp_path: Path) -> None:
    home = tmp_path / "me"
    (home / ".cursor").mkdir(parents=True)
    (home / ".cursor" / "mcp.json").write_text("{not json")
    done = zm("setup", "cursor", env={"HOME": str(home)})
    assert done.exit_code == 1 and done.stderr.startswith("validation_failed:") and "mcp.json" in done.stderr
    assert (home / ".cursor" / "mcp.json").read_text() == "{not json"


@pytest.mark.parametrize(
    ("document", "change"),
    [
        ({}, "added"),
        ({"mcpServers": {"zero-memory": {"command": "zm", "args": ["mcp"]}}}, "unchanged"),
        ({"mcpServers": {"zero-memory": {"command": "old", "args": ["mcp"]}}}, "updated"),
    ],
)
def test_a_server_entry_reports_what_it_changed(document: dict[str, object], change: str) -> None:
    entry = ServerEntry("x.json", ("mcpServers", "zero-memory"), {"command": "zm", "args": ["mcp"]})
    assert entry.apply(document).change == change
    assert entry.apply(document).change == "unchanged"


def test_a_hook_entry_never_touches_other_hooks() -> None:
    entry = HookEntry("s.json", "SessionStart", "/bin/zm context --hook", "context --hook")
    document: dict[str, object] = {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "x"}]}]}}
    assert entry.apply(document).change == "added"
    assert entry.apply(document).change == "unchanged"
    assert document["hooks"]["SessionStart"][0] == {"hooks": [{"type": "command", "command": "x"}]}  # type: ignore[index]


def test_a_database_password_is_never_shown() -> None:
    assert redact("postgresql://zm:s3cret@db:5432/zm") == "postgresql://zm:***@db:5432/zm"


CODEX_EDITED = """\
# my Codex settings
model = "o4-mini"

[mcp_servers.zero-memory]
url = "http://127.0.0.1:8787/mcp"  # I tried the HTTP server first
bearer_token_env_var = "ZM_TOKEN"
startup_timeout_sec = 20
tool_timeout_sec = 90
enabled_tools = ["remember", "recall", "build_context"]

[mcp_servers.zero-memory.env]
MY_FLAG = "1"
"""


def test_codex_over_an_entry_the_user_edited_keeps_their_keys_and_reports_each_change(
    zm_binary: Zm, tmp_path: Path
) -> None:
    home = tmp_path / "me"
    config = home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(CODEX_EDITED)

    first = run_setup(zm_binary, home, "codex")
    lines = first.stdout.splitlines()
    assert lines[0] == f"updated: mcp_servers.zero-memory in {config}"
    assert "  added: command" in lines and "  added: args" in lines and "  added: env.ZM_HOME" in lines
    assert "  removed: url (an HTTP setting; Codex refuses it in a stdio server)" in lines
    assert "  removed: bearer_token_env_var (an HTTP setting; Codex refuses it in a stdio server)" in lines
    kept = "  kept (yours): env.MY_FLAG, startup_timeout_sec, tool_timeout_sec, enabled_tools"
    assert kept in lines
    parsed = tomllib.loads(config.read_text())
    server = parsed["mcp_servers"]["zero-memory"]
    # What Codex accepts for a stdio server: a command and none of the HTTP settings.
    assert server["args"] == ["mcp"] and Path(server["command"]).name == "zm"
    assert "url" not in server and "bearer_token_env_var" not in server
    assert server["startup_timeout_sec"] == 20 and server["tool_timeout_sec"] == 90
    assert server["enabled_tools"] == ["remember", "recall", "build_context"]
    assert server["env"] == {"MY_FLAG": "1", "ZM_HOME": str(tmp_path / "zm-home")}
    assert parsed["model"] == "o4-mini" and config.read_text().startswith("# my Codex settings\n")

    second = run_setup(zm_binary, home, "codex")
    assert second.stdout.splitlines()[:2] == [f"unchanged: mcp_servers.zero-memory in {config}", kept]
    assert tomllib.loads(config.read_text()) == parsed

    # A changed value is updated in place; the user's keys around it stay where they were.
    moved = run_setup(zm_binary, home, "codex", env={"ZM_HOME": str(tmp_path / "elsewhere")})
    assert moved.stdout.splitlines()[:3] == [
        f"updated: mcp_servers.zero-memory in {config}",
        "  changed: env.ZM_HOME",
        kept,
    ]
    server = tomllib.loads(config.read_text())["mcp_servers"]["zero-memory"]
    assert server["env"] == {"MY_FLAG": "1", "ZM_HOME": str(tmp_path / "elsewhere")}
    assert list(server)[:3] == ["startup_timeout_sec", "tool_timeout_sec", "enabled_tools"]


def test_claude_code_keeps_the_env_the_user_gave_our_server(zm_binary: Zm, tmp_path: Path) -> None:
    """Run from a shell without ZM_HOME, setup must not drop the one in the entry: the server would open the
    default, empty store and the user's memories would seem gone."""
    home = tmp_path / "me"
    run_setup(zm_binary, home, "claude-code")
    path = home / ".claude.json"
    config = json.loads(path.read_text())
    config["mcpServers"]["zero-memory"]["env"]["ZM_USER"] = "alice"
    config["mcpServers"]["zero-memory"]["description"] = "my memory"
    path.write_text(json.dumps(config))

    again = run_setup(zm_binary, home, "claude-code", env={"ZM_HOME": ""})
    lines = again.stdout.splitlines()
    assert f"unchanged: mcpServers.zero-memory in {path}" in lines
    assert "  kept (yours): env, description" in lines and "  kept (yours): command: ZM_HOME" in lines
    server = json.loads(path.read_text())["mcpServers"]["zero-memory"]
    assert server["env"] == {"ZM_HOME": str(tmp_path / "zm-home"), "ZM_USER": "alice"}
    assert server["description"] == "my memory"
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    (hook,) = [h for g in settings["hooks"]["SessionStart"] for h in g["hooks"]]
    assert hook["command"].startswith(f"ZM_HOME={tmp_path / 'zm-home'} ")

    # An HTTP entry the user had under our name becomes the stdio one, their headers taken out (a token).
    config = json.loads(path.read_text())
    config["mcpServers"]["zero-memory"] = {"type": "http", "url": "http://127.0.0.1:8787/mcp", "headers": {"A": "b"}}
    path.write_text(json.dumps(config))
    switched = run_setup(zm_binary, home, "claude-code").stdout.splitlines()
    assert switched[:5] == [
        f"updated: mcpServers.zero-memory in {path}",
        "  changed: type",
        "  added: command",
        "  added: args",
        "  added: env",
    ]
    assert "  removed: url (an HTTP setting; this entry runs zm mcp)" in switched
    assert "  removed: headers (an HTTP setting; this entry runs zm mcp)" in switched
    server = json.loads(path.read_text())["mcpServers"]["zero-memory"]
    assert set(server) == {"type", "command", "args", "env"} and server["type"] == "stdio"


def test_the_briefing_hook_gets_its_matcher_and_keeps_what_the_user_added() -> None:
    entry = HookEntry("s.json", "SessionStart", "/bin/zm context --hook", "context --hook", matcher=BRIEFING_MATCHER)
    theirs = {"type": "command", "command": "echo hi"}
    # Installed before there was a matcher, and shared by the user with a hook of their own.
    original = {"type": "command", "command": "/old/zm context --hook", "timeout": 30, "statusMessage": "briefing"}
    old = dict(original)
    document: dict[str, object] = {"hooks": {"SessionStart": [{"hooks": [theirs, old]}]}}
    outcome = entry.apply(document)
    assert outcome.change == "updated" and outcome.kept == ("statusMessage",)
    assert [e.line() for e in outcome.edits] == ["changed: command", "changed: matcher (moved to a group of its own)"]
    assert document["hooks"]["SessionStart"] == [  # type: ignore[index]
        {"hooks": [theirs]},
        {"matcher": BRIEFING_MATCHER, "hooks": [{**original, "command": "/bin/zm context --hook"}]},
    ]
    assert entry.apply(document).change == "unchanged"
    alone: dict[str, object] = {"hooks": {"SessionStart": [{"hooks": [dict(original)]}, {"hooks": [dict(original)]}]}}
    edits = [e.line() for e in entry.apply(alone).edits]
    assert edits == ["changed: command", "removed: a second copy of this hook", "added: matcher"]
    assert alone["hooks"]["SessionStart"] == [  # type: ignore[index]
        {"hooks": [{**original, "command": "/bin/zm context --hook"}], "matcher": BRIEFING_MATCHER}
    ]


def test_setup_starts_zm_mcp_ahead_so_the_first_start_answers_at_once(zm_binary: Zm, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = run_setup(zm_binary, home, "codex", warm=True)
    versions = ", ".join(HANDSHAKE_PROTOCOL_VERSIONS)
    assert f"ready: zm mcp answers at once (protocol versions {versions})" in done.stdout
    data_home = Path(zm_binary.env["ZM_HOME"])
    on_record = catalogue.load(data_home, catalogue.fingerprint())
    assert set(on_record) == set(HANDSHAKE_PROTOCOL_VERSIONS)
    assert all(answer["tools"]["tools"] for answer in on_record.values())
    again = run_setup(zm_binary, home, "codex", warm=True)  # all on record: nothing started
    assert f"ready: zm mcp answers at once (protocol versions {versions})" in again.stdout
