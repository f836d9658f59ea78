"""Misled signals (docs/spec/hygiene.md §11): which sessions a memory misled, and what a person settled since.

A ``challenge`` audit row is one session's signal: it names the open row it
was recorded on (``dispute_id``) and the session, as a digest of the user and
their session id (``session``), never the id itself. The challenge tool writes
these rows (conflicts/challenge.py) and stale-suspect detection counts them
(hygiene/suspects.py): both read them here.

Only a person spends the evidence: a settlement of a single-subject row by a
person (the dashboard, the CLI: its ``queue.resolve`` row says ``settled_by:
human``) or ``zm reaffirm``. An agent settling a row over MCP closes it and
spends nothing. A settlement recorded before settlements said who made them
counts as a person's, as every settlement did then.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterator
from datetime import datetime
from itertools import takewhile

from zero_memory import transitions
from zero_memory.domain.memory import AuthorKind
from zero_memory.domain.records import AuditEntry
from zero_memory.store.base import Tx

CHALLENGE = transitions.CHALLENGE  # the audit action of one session's signal
CHALLENGED = "challenged"  # the verdict of the row a challenge raises
SUSPECT = "stale_suspect"  # the verdict of a row about a memory that misled enough sessions
DOUBTS = (CHALLENGED, SUSPECT)  # a memory has at most one open row of these: later challenges join it
SETTLED = ("queue.resolve", "reaffirm")
PAGE = 200


def session_key(uid: str, session_id: str | None) -> str:
    """One user's one session, as stored in a signal. Calls without a session cannot be told apart: together
    they are one session of that user."""
    return hashlib.sha256(f"{uid}\0{session_id or ''}".encode()).hexdigest()[:16]


def newest_first(tx: Tx, memory_id: str, actions: Collection[str]) -> Iterator[AuditEntry]:
    """The memory's audit rows of these actions, newest first, however long its trail."""
    before = None
    while True:
        page = tx.audit_for_memory(memory_id, actions=actions, before=before, limit=PAGE)
        yield from page
        if len(page) < PAGE:
            return
        before = page[-1].seq


def signal_key(entry: AuditEntry) -> str:
    """The session a signal counts for; a signal written before sessions were recorded counts on its own."""
    session = entry.payload.get("session")
    return session if isinstance(session, str) else f"row:{entry.seq}"


def challengers(tx: Tx, memory_id: str, dispute_id: str) -> set[str]:
    """The sessions recorded on one open row about the memory."""
    signals = newest_first(tx, memory_id, (CHALLENGE,))
    return {signal_key(e) for e in signals if e.payload.get("dispute_id") == dispute_id}


def sessions_since(tx: Tx, memory_id: str, floor: datetime) -> set[str]:
    """The distinct sessions the memory misled after ``floor``, whichever rows recorded them."""
    recent = takewhile(lambda e: e.at > floor, newest_first(tx, memory_id, (CHALLENGE,)))
    return {signal_key(e) for e in recent}


def by_person(entry: AuditEntry) -> bool:
    """A person's settlement of a doubt about one memory (a pair row's settlement is about two)."""
    if entry.action == "reaffirm":
        return True
    return len(entry.memory_ids) == 1 and entry.payload.get("settled_by", AuthorKind.HUMAN.value) == AuthorKind.HUMAN


def last_spent(tx: Tx, memory_id: str) -> datetime | None:
    """When a person last settled a doubt about the memory: the signals before that moment are spent."""
    return next((e.at for e in newest_first(tx, memory_id, SETTLED) if by_person(e)), None)
