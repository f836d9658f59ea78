"""The writers' queue of a SQLite file: shared by the processes that write it, released when one dies."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from pathlib import Path

from tests.store.factories import DIM, add_users, memory, put
from tests.store.writer import vector_for
from zero_memory.store.sqlite.adapter import SQLiteStore

HOLD = """
import fcntl, os, sys, time
file = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(file, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(600)
"""


def test_a_writer_waits_for_another_process_in_the_queue_and_goes_in_when_it_dies(tmp_path: Path) -> None:
    store = SQLiteStore.open(f"sqlite:///{tmp_path / 'zm.db'}", dim=DIM)
    try:
        with store.tx(write=True) as tx:
            add_users(tx, "alice")
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLD, str(tmp_path / "zm.db-writers")], stdout=subprocess.PIPE, text=True
        )
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        written = threading.Event()

        def write() -> None:
            with store.tx(write=True) as tx:
                put(tx, memory("queued"), vector_for("queued"))
            written.set()

        writer = threading.Thread(target=write)
        writer.start()
        # SQLite itself is unlocked: only the other process's place in the queue holds this writer back.
        assert not written.wait(1.0)
        with store.tx() as tx:
            assert [m.content for m in tx.live_memories(limit=10)] == []
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
        writer.join(timeout=30)
        assert written.is_set()
        with store.tx() as tx:
            assert [m.content for m in tx.live_memories(limit=10)] == ["queued"]
    finally:
        store.close()
