"""Client hooks: the new part of a session is sent once, and a failed send is sent on the next turn."""

from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.capture.conftest import Capture
from zero_memory import errors
from zero_memory.capture import budget, hooks
from zero_memory.capture.models import HookReport
from zero_memory.judge.questions.extraction import ExtractionRequest

SAMPLE = Path(__file__).with_name("data") / "claude_transcript.jsonl"
SESSION = "8f1c2a4e-5b6d-4e7f-9a0b-1c2d3e4f5a6b"


def line(role: str, text: str) -> str:
    return json.dumps({"type": role, "message": {"role": role, "content": [{"type": "text", "text": text}]}}) + "\n"


def sent(capture: Capture) -> list[str]:
    """Every transcript the extraction model was asked about, in order."""
    return [r.transcript for r in capture.model.requests if isinstance(r, ExtractionRequest)]


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    copy = tmp_path / "projects" / "-home-dev-src-api" / f"{SESSION}.jsonl"
    copy.parent.mkdir(parents=True)
    shutil.copy(SAMPLE, copy)
    return copy


def run_claude(capture: Capture, transcript: Path, states: Path, **extra: Any) -> HookReport:
    payload = {
        "session_id": SESSION,
        "transcript_path": str(transcript),
        "cwd": capture.project,
        "hook_event_name": "SessionEnd",
        "reason": "exit",
        **extra,
    }
    report = hooks.claude_code(capture.app, capture.alice, payload, states)
    capture.app.wait_idle()
    return report


def test_claude_code_sends_only_new_complete_lines_once(capture: Capture, transcript: Path, tmp_path: Path) -> None:
    states = tmp_path / "hooks"
    capture.model.enqueue([], [], [])
    first = run_claude(capture, transcript, states)
    assert first.turns == 5 and first.offset == transcript.stat().st_size
    assert len(sent(capture)) == 1
    assert sent(capture)[0].startswith("user: How do we deploy the api service to staging?")
    assert "TOOL_OUTPUT_BODY" not in sent(capture)[0]

    again = run_claude(capture, transcript, states)
    assert (again.turns, again.chunks) == (0, [])
    assert len(sent(capture)) == 1

    with transcript.open("a", encoding="utf-8") as handle:
        handle.write(line("user", "Also: the api's health check is /healthz."))
        handle.write(line("assistant", "Got it.")[:-10])  # still being written
    partial = run_claude(capture, transcript, states)
    assert partial.turns == 1
    assert sent(capture)[-1] == "user: Also: the api's health check is /healthz.\n\n"

    with transcript.open("a", encoding="utf-8") as handle:
        handle.write(line("assistant", "Got it.")[-10:])
    rest = run_claude(capture, transcript, states)
    assert rest.turns == 1 and sent(capture)[-1] == "assistant: Got it.\n\n"
    assert len(sent(capture)) == 3


def test_a_failed_send_keeps_the_offset_and_the_next_turn_sends_it(
    capture: Capture, transcript: Path, tmp_path: Path
) -> None:
    states = tmp_path / "hooks"
    budget.set_budget(capture.app.store, "alice", 0, at=capture.clock())
    with pytest.raises(errors.ZMError, match="budget_exhausted"):
        run_claude(capture, transcript, states)
    assert sent(capture) == []

    with transcript.open("a", encoding="utf-8") as handle:
        handle.write(line("user", "One more turn after the failure."))
    budget.clear_budget(capture.app.store, "alice", at=capture.clock())
    capture.model.enqueue([])
    report = run_claude(capture, transcript, states)
    [text] = sent(capture)
    assert text.startswith("user: How do we deploy") and text.endswith("user: One more turn after the failure.\n\n")
    assert report.turns == 6 and [c.status for c in report.chunks] == ["accepted"]


def test_a_lost_state_file_sends_nothing_twice(capture: Capture, transcript: Path, tmp_path: Path) -> None:
    capture.model.enqueue([])
    run_claude(capture, transcript, tmp_path / "hooks")
    shutil.rmtree(tmp_path / "hooks")
    report = run_claude(capture, transcript, tmp_path / "hooks")
    assert [c.status for c in report.chunks] == ["duplicate"]
    assert len(sent(capture)) == 1


def test_a_turn_holding_a_credential_is_left_out(capture: Capture, transcript: Path, tmp_path: Path) -> None:
    token = "xoxb-" + "123456789012-1234567890123-abcdefghijABCDEFGHIJklmn"
    transcript.write_text(
        line("user", f"The bot token is {token}") + line("assistant", "Keep it out of the repository."),
        encoding="utf-8",
    )
    capture.model.enqueue([])
    report = run_claude(capture, transcript, tmp_path / "hooks")
    assert (report.turns, report.withheld_turns) == (1, 1)
    assert sent(capture) == ["assistant: Keep it out of the repository.\n\n"]


def test_a_transcript_replaced_by_a_shorter_file_is_read_from_its_start(
    capture: Capture, transcript: Path, tmp_path: Path
) -> None:
    capture.model.enqueue([], [])
    run_claude(capture, transcript, tmp_path / "hooks")
    transcript.write_text(line("user", "A new, short session file."), encoding="utf-8")
    report = run_claude(capture, transcript, tmp_path / "hooks")
    assert report.turns == 1 and sent(capture)[-1] == "user: A new, short session file.\n\n"


def test_bad_hook_input_is_refused(capture: Capture, tmp_path: Path) -> None:
    with pytest.raises(errors.ZMError, match="session_id"):
        hooks.claude_code(capture.app, capture.alice, {"transcript_path": "x"}, tmp_path)
    with pytest.raises(errors.ZMError, match="not_found: no transcript file"):
        hooks.claude_code(
            capture.app, capture.alice, {"session_id": "s", "transcript_path": str(tmp_path / "none")}, tmp_path
        )


def codex_turn(turn: str, said: str, answer: str) -> dict[str, Any]:
    return {
        "type": "agent-turn-complete",
        "thread-id": "b5f6c1c2-1111-2222-3333-444455556666",
        "turn-id": turn,
        "cwd": "/Users/alice/projects/example",
        "input-messages": [said],
        "last-assistant-message": answer,
    }


def test_codex_turns_are_sent_once_and_a_failed_one_goes_with_the_next(capture: Capture, tmp_path: Path) -> None:
    states = tmp_path / "hooks"
    capture.model.enqueue([])
    hooks.codex(capture.app, capture.alice, codex_turn("1", "Rename foo to bar.", "Renamed."), states)
    capture.app.wait_idle()
    again = hooks.codex(capture.app, capture.alice, codex_turn("1", "Rename foo to bar.", "Renamed."), states)
    assert (again.turns, again.chunks) == (0, [])
    assert sent(capture) == ["user: Rename foo to bar.\n\nassistant: Renamed.\n\n"]

    budget.set_budget(capture.app.store, "alice", 0, at=capture.clock())
    with pytest.raises(errors.ZMError, match="budget_exhausted"):
        hooks.codex(capture.app, capture.alice, codex_turn("2", "Add a test.", "Added."), states)
    budget.clear_budget(capture.app.store, "alice", at=capture.clock())
    capture.model.enqueue([])
    report = hooks.codex(capture.app, capture.alice, codex_turn("3", "Run it.", "It passes."), states)
    capture.app.wait_idle()
    assert report.turns == 4
    assert sent(capture)[-1] == "user: Add a test.\n\nassistant: Added.\n\nuser: Run it.\n\nassistant: It passes.\n\n"
    assert len(sent(capture)) == 2
    assert report.chunks[0].scope.endswith(".example")


def test_a_long_new_part_is_read_over_several_runs_and_a_giant_entry_is_stepped_over(
    capture: Capture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hooks, "MAX_READ_BYTES", 300)
    transcript = tmp_path / "session.jsonl"
    lines = [line("user", f"Question number {n} about the api?") for n in range(4)]
    giant = line("assistant", "x" * 700)
    transcript.write_text("".join(lines[:2]) + giant + "".join(lines[2:]), encoding="utf-8")
    capture.model.enqueue(*[[]] * 10)
    size = transcript.stat().st_size
    offsets = []
    while not offsets or offsets[-1] < size:
        offsets.append(run_claude(capture, transcript, tmp_path / "hooks").offset or 0)
        assert len(offsets) < 20, offsets
    assert all(b - a <= 300 for a, b in zip([0, *offsets], offsets, strict=False))
    said = "".join(sent(capture))
    assert [said.count(f"Question number {n} ") for n in range(4)] == [1, 1, 1, 1]
    assert "xxxx" not in said


def test_two_runs_of_one_sessions_hook_at_once_send_each_line_once(
    capture: Capture, transcript: Path, tmp_path: Path
) -> None:
    capture.model.enqueue([], [])
    with ThreadPoolExecutor(max_workers=2) as pool:
        reports = list(pool.map(lambda _: run_claude(capture, transcript, tmp_path / "hooks"), range(2)))
    assert sorted(r.turns for r in reports) == [0, 5]
    assert len(sent(capture)) == 1
