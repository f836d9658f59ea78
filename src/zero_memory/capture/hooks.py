"""Client hooks: send the new part of a session to ingestion, once, and keep trying after a failure.

``zm hook claude-code`` reads Claude Code's hook JSON on stdin (``session_id``,
``transcript_path``, ``cwd``) and sends the transcript lines written since the
last run. ``zm hook codex`` is Codex's ``notify`` program: it gets one finished
turn as JSON and sends it. Each session keeps a small state file under
``$ZM_HOME/hooks/``: for Claude Code the byte offset of the transcript read so
far (only complete lines count), for Codex the turns sent and those still to
send. The state moves on only after ingestion accepted the text, so a failed
send is sent again on the next turn; and since ingestion is idempotent per
chunk, a state file that was lost sends nothing twice that was not already
recognised.

A turn holding a credential is left out here (and counted), so the rest of
the session's words still reach extraction; the server's guard would refuse
the whole chunk otherwise.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from zero_memory import errors
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.capture.ingest import ingest_text
from zero_memory.capture.models import HookReport
from zero_memory.capture.transcripts import Turn, claude_code_turns, codex_turns, render
from zero_memory.memory.guard import find_secret

if sys.platform == "win32":
    import msvcrt

    def _lock(fd: int) -> None:
        msvcrt.locking(fd, msvcrt.LK_LOCK, 1)

else:
    import fcntl

    def _lock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)


CLAUDE_CODE = "claude-code"
CODEX = "codex"
SENT_TURNS_KEPT = 500
"""Codex turn ids remembered per session, to recognise a notification delivered twice."""
MAX_READ_BYTES = 32 * 1024 * 1024
"""Transcript read per run; a longer new part (a first run on a long session) is sent over several runs."""


def state_dir(app: App) -> Path:
    return states_in(app.settings.home)


def states_in(home: str | Path) -> Path:
    return Path(home) / "hooks"


def nothing_to_read(payload: Mapping[str, Any]) -> str | None:
    """Why a Claude Code hook run has nothing to send, found before any store is opened: Claude Code runs
    SessionEnd for sessions that never wrote their transcript (``claude mcp list``)."""
    _text(payload, "session_id")
    transcript = Path(_text(payload, "transcript_path")).expanduser()
    if not transcript.is_file():
        return f"no transcript at {transcript} (a session that never wrote one, e.g. claude mcp list)"
    if transcript.stat().st_size == 0:
        return f"the transcript {transcript} is empty"
    return None


def claude_code(app: App, caller: Caller, payload: Mapping[str, Any], states: Path) -> HookReport:
    """Send what the session's transcript gained since the last run."""
    session = _text(payload, "session_id")
    transcript = Path(_text(payload, "transcript_path")).expanduser()
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
    if not transcript.is_file():
        raise errors.not_found(f"transcript file {transcript}")
    with _state(states, CLAUDE_CODE, session) as state:
        offset = int(state.get("offset", 0)) if state.get("transcript") == str(transcript) else 0
        with transcript.open("rb") as handle:
            if handle.seek(0, os.SEEK_END) < offset:
                offset = 0  # the file was replaced by a shorter one: read it from the start
            handle.seek(offset)
            data = handle.read(MAX_READ_BYTES)
        complete = data[: data.rfind(b"\n") + 1]  # a line still being written waits for the next run
        if not complete and len(data) == MAX_READ_BYTES:
            # One entry longer than a whole read (a giant tool result): step over what was read; the
            # rest of that line is not JSON on its own and is skipped on the next run.
            complete = data
        turns = claude_code_turns(complete.decode("utf-8", errors="replace").splitlines())
        report = _send(app, caller, turns, session=session, client=CLAUDE_CODE, project_hint=cwd)
        state.update(transcript=str(transcript), offset=offset + len(complete))
        return report.model_copy(update={"offset": offset + len(complete)})


def check_codex(payload: Mapping[str, Any]) -> None:
    """Refuse a notification that is not a finished turn of a known thread."""
    if payload.get("type") != "agent-turn-complete":
        raise errors.validation(f"type: expected agent-turn-complete, got {str(payload.get('type'))[:40]!r}")
    _text(payload, "thread-id")
    _text(payload, "turn-id")


def keep_codex_turn(payload: Mapping[str, Any], states: Path) -> None:
    """Save a finished Codex turn as pending, before any store is opened: a run that cannot send it (the
    database down) leaves it for the next turn's run, which sends it first."""
    check_codex(payload)
    with _state(states, CODEX, _text(payload, "thread-id")) as state:
        _pending(state, payload)


def codex(app: App, caller: Caller, payload: Mapping[str, Any], states: Path) -> HookReport:
    """Send one finished Codex turn, with any earlier turn whose send failed."""
    check_codex(payload)
    session = _text(payload, "thread-id")
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
    with _state(states, CODEX, session) as state:
        sent: list[str] = list(state.get("sent", []))
        pending = _pending(state, payload)
        turns = [Turn(role, text) for p in pending for role, text in p["turns"]]
        # Saved before sending: a failed send leaves this turn pending for the next one.
        _save(states, CODEX, session, state)
        report = _send(app, caller, turns, session=session, client=CODEX, project_hint=cwd)
        state.update(sent=[*sent, *(p["turn"] for p in pending)][-SENT_TURNS_KEPT:], pending=[])
        return report


def _pending(state: dict[str, Any], payload: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The turns still to send, this one added unless it was sent or kept already."""
    turn_id = _text(payload, "turn-id")
    sent: list[str] = list(state.get("sent", []))
    pending: list[dict[str, Any]] = list(state.get("pending", []))
    if turn_id not in sent and all(p["turn"] != turn_id for p in pending):
        pending.append({"turn": turn_id, "turns": [[t.role, t.text] for t in codex_turns(payload)]})
        state["pending"] = pending
    return pending


def _send(
    app: App, caller: Caller, turns: list[Turn], *, session: str, client: str, project_hint: str | None
) -> HookReport:
    kept = [turn for turn in turns if find_secret(turn.text) is None]
    text = render(kept)
    chunks = []
    if text.strip():
        chunks = ingest_text(app, caller, text, conversation_id=session, client=client, project_hint=project_hint)
    return HookReport(
        client=client,
        session=session,
        turns=len(kept),
        withheld_turns=len(turns) - len(kept),
        chars=len(text),
        chunks=chunks,
    )


def _text(payload: Mapping[str, Any], name: str) -> str:
    value = payload.get(name)
    if not isinstance(value, str) or not value.strip():
        raise errors.validation(f"{name}: the hook input has no {name}")
    return value


def _path(states: Path, client: str, session: str) -> Path:
    # A hash, not the id itself: a session id is the client's text and must not become a path.
    name = hashlib.sha256(session.encode("utf-8")).hexdigest()[:32]
    return states / client / f"{name}.json"


@contextmanager
def _state(states: Path, client: str, session: str) -> Iterator[dict[str, Any]]:
    """The session's state, locked against another hook run of the same session; saved when the body succeeds."""
    path = _path(states, client, session)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    lock = os.open(path.with_suffix(".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        _lock(lock)  # released when the descriptor is closed
        try:
            state = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        except ValueError:
            state = {}  # a damaged state file: start over; ingestion recognises chunks it already has
        state["session"] = session
        yield state
        _save(states, client, session, state)
    finally:
        os.close(lock)


def _save(states: Path, client: str, session: str, state: dict[str, Any]) -> None:
    path = _path(states, client, session)
    partial = path.with_suffix(".tmp")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(state, handle)
    os.replace(partial, path)
