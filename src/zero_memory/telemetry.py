"""Usage events and surfacings: what a call leaves behind besides its answer.

Every tool call records a usage event, and every recall and briefing the
memories it served as surfacings. Written in a transaction of their own, they
made every call a write, and on SQLite the writers of every process on the
file go one at a time (store/sqlite/writers.py): two ``zm serve`` workers spent their
time queued behind each other's telemetry. So a server gathers them and writes
them together, every ``FLUSH_INTERVAL_S`` or once ``FLUSH_ROWS`` are waiting,
and at shutdown (``start`` / ``stop``, by ``server/services.py``). Anywhere
else (the CLI, ``zm mcp``, a test's app) each is written when it is recorded.

What a batch risks: a server killed without its shutdown (SIGKILL, a power
cut) loses the rows of its last interval. They are evidence of use — the
dashboard's counts, re-examination's and reinforcement's inputs — never a
memory: ``remember`` commits before it answers, whatever this module does.
A batch is one transaction, so a failed one leaves nothing behind and is tried
again: no row is written twice. Rows of a user erased before their batch is
written are dropped, as are surfacings of memories that no longer exist.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from zero_memory.background import Loop
from zero_memory.domain.records import Channel
from zero_memory.store.base import Store

log = logging.getLogger("zero_memory.telemetry")

# At 150 calls/s, a batch of about 15 calls: one write transaction where there were 15 to 25.
FLUSH_INTERVAL_S = 0.1
FLUSH_ROWS = 500
# What waits while the database refuses every batch (locked for minutes, a full disk): beyond it, the oldest go.
MAX_PENDING = 50_000


@dataclass(frozen=True, slots=True)
class UsageEvent:
    user_id: str
    tool: str
    client: str
    outcome: str
    declared_supersede: bool
    at: datetime


@dataclass(frozen=True, slots=True)
class Surfacing:
    """The memories one call served one user, on one channel."""

    user_id: str
    memory_ids: tuple[str, ...]
    at: datetime
    session_id: str | None
    channel: Channel


Row = UsageEvent | Surfacing


class Telemetry:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._pending: list[Row] = []
        self._flusher: Loop | None = None
        self._rows = FLUSH_ROWS

    @property
    def buffering(self) -> bool:
        """Whether a row is only queued when recorded (cheap enough for the event loop) or written at once."""
        return self._flusher is not None

    def record(self, row: Row) -> None:
        """Queue a row while buffering, else write it now; never raises (a lost row must not fail its call)."""
        with self._lock:
            if self._flusher is not None:
                self._pending.append(row)
                if len(self._pending) >= self._rows:
                    self._flusher.wake()
                return
        self._write_logged([row])

    def start(self, *, interval_s: float = FLUSH_INTERVAL_S, rows: int = FLUSH_ROWS) -> None:
        """Buffer from now on, written by a thread every ``interval_s`` or once ``rows`` wait."""
        with self._lock:
            if self._flusher is not None:
                return
            self._rows = rows
            self._flusher = Loop("zm-telemetry", self.flush, every=interval_s, failed="the telemetry flush")
            self._flusher.start()

    def stop(self) -> None:
        """Write what waits and stop buffering: rows recorded from now on are written at once."""
        with self._lock:
            flusher = self._flusher
        if flusher is None:
            return
        flusher.stop(timeout=None)
        with self._lock:
            self._flusher = None
        self.flush()

    def flush(self) -> int:
        """Write every row waiting, in one transaction; how many were written (0 when it failed, kept for later)."""
        with self._lock:
            rows, self._pending = self._pending, []
        if not rows:
            return 0
        if self._write_logged(rows):
            return len(rows)
        with self._lock:
            # Rolled back: nothing of the batch was written, so it goes again with the next one.
            waiting = rows + self._pending
            dropped = len(waiting) - MAX_PENDING
            self._pending = waiting[-MAX_PENDING:]
        if dropped > 0:
            log.error("telemetry: %d usage events and surfacings dropped, the database refusing them", dropped)
        return 0

    def _write_logged(self, rows: Sequence[Row]) -> bool:
        try:
            write(self.store, rows)
        except Exception:
            log.exception("could not record %d usage events and surfacings", len(rows))
            return False
        return True


def write(store: Store, rows: Sequence[Row]) -> None:
    """Write rows of any users in one transaction, leaving out those of users or memories that are gone."""
    with store.tx(write=True) as tx:
        tx.act_as_system("telemetry")
        users = {row.user_id for row in rows}
        present = {uid for uid in users if tx.get_user(uid) is not None}
        served = {i for row in rows if isinstance(row, Surfacing) for i in row.memory_ids}
        existing = tx.existing_ids(served) if served else set()
        for row in rows:
            if row.user_id not in present:
                continue
            if isinstance(row, UsageEvent):
                tx.add_usage_event(
                    user_id=row.user_id,
                    tool=row.tool,
                    client=row.client,
                    outcome=row.outcome,
                    declared_supersede=row.declared_supersede,
                    at=row.at,
                )
            else:
                ids = [i for i in row.memory_ids if i in existing]
                if ids:
                    tx.add_surfacings(row.user_id, ids, row.at, session_id=row.session_id, channel=row.channel)
