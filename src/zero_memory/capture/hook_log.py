"""The capture hooks' log: one line per run, ``$ZM_HOME/hooks/hooks.log``, read with ``zm capture log``.

A hook runs inside a client that shows a failing hook on the user's screen for
every session (Claude Code runs SessionEnd even for ``claude mcp list``). So a
hook that has nothing to send, or cannot send now (the database or the model
is down, today's budget is spent), exits 0 quietly and says what happened
here instead. The file is kept short: past ``MAX_BYTES`` it keeps its newest
``KEEP_LINES`` lines.
"""

from __future__ import annotations

import os
from collections import deque
from datetime import datetime
from pathlib import Path

FILE = Path("hooks") / "hooks.log"
MAX_BYTES = 512 * 1024
KEEP_LINES = 2_000


def path(home: str | Path) -> Path:
    return Path(home) / FILE


def line(at: datetime, client: str, event: str, session: str | None, outcome: str) -> str:
    """``2026-12-03T18:04:19Z claude-code SessionEnd 8f1c2a4e: sent 5 turn(s)``: one line, whatever it holds."""
    who = f"{client} {event}" + (f" {session[:8]}" if session else "")
    return f"{at.strftime('%Y-%m-%dT%H:%M:%SZ')} {who}: {' '.join(outcome.split())}"


def append(home: str | Path, text: str) -> None:
    """Add one line; never raises (a log that cannot be written must not fail the hook either)."""
    file = path(home)
    try:
        file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as handle:
            handle.write(text + "\n")
        if file.stat().st_size > MAX_BYTES:
            _shorten(file)
    except OSError:
        pass


def tail(home: str | Path, count: int) -> list[str]:
    """The newest ``count`` lines, oldest first; none when no hook has run."""
    file = path(home)
    return _last(file, count) if file.exists() else []


def _last(file: Path, count: int) -> list[str]:
    with file.open(encoding="utf-8", errors="replace") as handle:
        return [text.rstrip("\n") for text in deque(handle, maxlen=count)]


def _shorten(file: Path) -> None:
    kept = _last(file, KEEP_LINES)
    partial = file.with_suffix(".tmp")
    partial.write_text("".join(f"{text}\n" for text in kept), encoding="utf-8")
    os.replace(partial, file)
