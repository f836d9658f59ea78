"""``zm ingest``, ``zm hook claude-code|codex``, ``zm user budget`` and ``zm capture``, run as a user runs them,
with a fake OpenAI-compatible server on 127.0.0.1 as the extraction model."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.cli.harness import Result, Zm
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.server import RecordedRequest, Reply

SAMPLE = Path(__file__).parents[1] / "capture" / "data" / "claude_transcript.jsonl"
SESSION = "8f1c2a4e-5b6d-4e7f-9a0b-1c2d3e4f5a6b"
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
    failed = run("hook", "claude-code", stdin=hook, binary=True)
    assert failed.exit_code == 1 and failed.stderr.startswith("unavailable: budget_exhausted:")
    assert len(model.requests) == 1

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
