"""One queue for every writer of a SQLite file: this process's threads and every other process's.

A writer that finds the file locked in ``BEGIN IMMEDIATE`` waits in SQLite's
busy handler, which sleeps in growing steps (1, 2, 5, 10 … up to 100 ms) and
leaves the file unlocked while every waiter sleeps. So writers queue here
first: the threads of a process on a lock of the store, the processes on an
``flock`` of a file next to the database (``zm.db-writers``), and each goes in
the moment the one before ends. Measured with two stores on one file (as two
``zm serve`` have), eight calls at once: 0.7–1.0 s asleep in ``BEGIN
IMMEDIATE`` over 500 write transactions, 0.08–0.13 s with the queue. The
queue only orders writers who take it; SQLite's own lock still decides, so a
process that does not queue (an older version, the ``sqlite3`` shell) is as
safe as before and meets the busy handler as before. The kernel releases the
``flock`` of a process that dies.
"""

from __future__ import annotations

import fcntl
import os
import threading
from contextlib import suppress
from pathlib import Path


class Writers:
    def __init__(self, database: Path) -> None:
        self.path = Path(f"{database}-writers")
        self._threads = threading.Lock()
        self._file: int | None = None
        self._unavailable = False

    def acquire(self, timeout_s: float) -> bool:
        """Wait for this process's turn (up to ``timeout_s``), then for the file's; False on a timeout."""
        if not self._threads.acquire(timeout=timeout_s):
            return False
        file = self._opened()
        if file is not None:
            # On a file system without flock, SQLite's busy handler orders the processes.
            with suppress(OSError):
                fcntl.flock(file, fcntl.LOCK_EX)
        return True

    def release(self) -> None:
        if self._file is not None:
            with suppress(OSError):
                fcntl.flock(self._file, fcntl.LOCK_UN)
        self._threads.release()

    def close(self) -> None:
        # Not under the threads' lock: closing a store from inside its own transaction must not hang.
        # A writer still in its transaction keeps SQLite's lock; only the queue behind it is gone.
        file, self._file = self._file, None
        if file is not None:
            os.close(file)

    def _opened(self) -> int | None:
        if self._file is None and not self._unavailable:
            try:
                self._file = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            except OSError:
                self._unavailable = True  # a read-only directory: nothing to write anyway
        return self._file
