"""A server's processes and CPU time as Linux's /proc tells them: for the serving benchmarks."""

from __future__ import annotations

import os
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    """A process's live children (the workers of ``zm serve --workers``, and any helper it started)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        listed = task / "children"
        if listed.exists():
            found.extend(int(child) for child in listed.read_text().split())
    return found


def cpu_s(pid: int, *, thread: int | None = None, reaped: bool = False) -> float:
    """User + system CPU seconds of a process (of one of its threads, given ``thread``), and of its children
    it has reaped when ``reaped``."""
    path = f"/proc/{pid}/task/{thread}/stat" if thread is not None else f"/proc/{pid}/stat"
    fields = Path(path).read_text().rsplit(")", 1)[1].split()
    return sum(int(value) for value in fields[11 : 15 if reaped else 13]) / TICKS


def descendants(pid: int) -> list[int]:
    """A process's live children, theirs, and so on (the query process of each worker of ``zm serve``)."""
    found = children(pid)
    return [each for child in found for each in [child, *descendants(child)]]


def tree_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process and of its live descendants."""
    return sum(cpu_s(each) for each in [pid, *descendants(pid)])
