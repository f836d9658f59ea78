"""Running ``tests.store.writer`` in other processes."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def writer(*args: str, stdout: int | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "tests.store.writer", *args], cwd=ROOT, stdout=stdout, text=True)


def kill(proc: subprocess.Popen[str], *, timeout: float = 60) -> None:
    """SIGKILL: the process gets no chance to finish what it is doing; its output pipe is closed."""
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=timeout)
    if proc.stdout is not None:
        proc.stdout.close()


def insert_concurrently(url: str, tmp_path: Path, tags: list[str], count: int) -> None:
    """Every tag's writer inserts ``count`` memories, all of them at once."""
    go = tmp_path / "go"
    procs = [writer("insert", url, tag, str(count), str(go)) for tag in tags]
    go.touch()
    for proc in procs:
        assert proc.wait(timeout=120) == 0
