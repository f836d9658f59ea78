"""A restart that inherits the dead server's pid: a container's pid 1, restarted on the same volume.

SQLite's named locks are rows naming their holder as host:pid:nonce; a row
whose process is gone is taken over. A new server that happens to run under
the dead one's pid must still see that row as dead, or the killed run stays
``running`` and its owner's lock blocks every scan for hours.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable

from zero_memory.app import App
from zero_memory.domain.records import Run, RunStatus
from zero_memory.hygiene import runs
from zero_memory.hygiene.cycle import owner_lock
from zero_memory.ids import new_id
from zero_memory.store import system_tx
from zero_memory.store.sqlite.adapter import SQLiteStore, SQLiteTx

MakeApp = Callable[..., App]


def test_locks_left_by_a_dead_process_with_this_pid_are_taken_over(make_app: MakeApp) -> None:
    app = make_app()
    run = Run(new_id("run"), "alice", "scan", RunStatus.RUNNING, False, "alice", app.clock(), None, {})
    earlier = f"{socket.gethostname()}:{os.getpid()}:0ldproc0"  # the killed server, same pid, another nonce
    with system_tx(app.store, "test", write=True) as tx:
        assert isinstance(tx, SQLiteTx)
        assert tx.claim_run(run)
        tx.touch_run(run.id, {}, app.clock())
        for name in (runs.lock_name(run.id), owner_lock("alice")):
            tx._exec("INSERT INTO locks(name, holder, expires_at) VALUES (?, ?, '9999-12-31')", (name, earlier))

    assert runs.interrupt_orphans(app) == [run.id]
    with system_tx(app.store, "test") as tx:
        interrupted = tx.get_run(run.id)
    assert interrupted is not None and interrupted.status is RunStatus.INTERRUPTED
    with app.store.advisory_lock(owner_lock("alice")) as taken:
        assert taken, "the owner's next scan is blocked by the dead server's lock"


def test_a_lock_held_by_a_live_store_of_this_process_is_not_taken(make_app: MakeApp) -> None:
    app = make_app()
    assert isinstance(app.store, SQLiteStore)
    again = SQLiteStore.open(f"sqlite:///{app.store.path}", dim=app.store.dim)
    try:
        with app.store.advisory_lock("hygiene:alice") as held, again.advisory_lock("hygiene:alice") as second:
            assert held and not second
    finally:
        again.close()
