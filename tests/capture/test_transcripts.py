"""The words of a transcript: user and assistant text only, never tool output, thinking or client text."""

from __future__ import annotations

from pathlib import Path

from zero_memory.capture.transcripts import Turn, claude_code_turns, codex_turns, render

SAMPLE = Path(__file__).with_name("data") / "claude_transcript.jsonl"


def test_a_claude_code_transcript_keeps_the_user_and_assistant_words_in_order() -> None:
    turns = claude_code_turns(SAMPLE.read_text(encoding="utf-8").splitlines())
    assert turns == [
        Turn("user", "How do we deploy the api service to staging?"),
        Turn("assistant", "Let me look at the Makefile."),
        Turn("assistant", "Run `make ship` from the repository root; it calls deploy.sh with the staging target."),
        Turn("user", "We decided staging deploys only happen from main, never from feature branches."),
        Turn("assistant", "Noted: staging deploys come from main only."),
    ]


def test_tool_output_thinking_meta_side_chains_and_client_text_are_left_out() -> None:
    text = render(claude_code_turns(SAMPLE.read_text(encoding="utf-8").splitlines()))
    for absent in (
        "TOOL_OUTPUT_BODY",
        "read the Makefile first",
        "Caveat:",
        "SIDECHAIN_SUBAGENT_WORDS",
        "IDE",
        "compacted",
    ):
        assert absent not in text


def test_unreadable_and_foreign_lines_are_skipped() -> None:
    lines = [
        "not json",
        "[1, 2]",
        '{"type": "user"}',
        '{"type": "user", "message": {"content": 7}}',
        '{"type": "user", "message": {"content": [{"type": "image", "source": {}}]}}',
        '{"type": "assistant", "message": {"content": [{"type": "text", "text": "kept"}]}}',
        '{"type": "user", "message": {"content": "<command-name>/cost</command-name>"}}',
    ]
    assert claude_code_turns(lines) == [Turn("assistant", "kept")]


def test_a_codex_turn_is_its_inputs_then_the_last_answer() -> None:
    notification = {
        "type": "agent-turn-complete",
        "thread-id": "b5f6c1c2-1111-2222-3333-444455556666",
        "turn-id": "12345",
        "cwd": "/Users/alice/projects/example",
        "input-messages": ["Rename `foo` to `bar` and update the callsites.", "  "],
        "last-assistant-message": "Rename complete and verified `cargo build` succeeds.",
    }
    assert codex_turns(notification) == [
        Turn("user", "Rename `foo` to `bar` and update the callsites."),
        Turn("assistant", "Rename complete and verified `cargo build` succeeds."),
    ]
    assert codex_turns({"type": "agent-turn-complete", "input-messages": "not a list"}) == []


def test_turns_render_as_labelled_paragraphs() -> None:
    assert render([Turn("user", "a"), Turn("assistant", "b")]) == "user: a\n\nassistant: b\n\n"
