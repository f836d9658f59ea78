"""Small readers and builders that keep the hygiene tests readable.

The readers look as a named system pass: on PostgreSQL a transaction naming no one sees no row (row-level
security), and an assertion that something is absent must not pass for that reason.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from zero_memory.app import App
from zero_memory.domain.memory import AuthorKind, Kind, Memory, Rank, Status
from zero_memory.domain.records import AuditEntry, Dispute, DisputeStatus, Link, pair_key
from zero_memory.judge.fake import FakeJudge
from zero_memory.judge.questions.pair import PairRequest
from zero_memory.store import SYSTEM, system_tx
from zero_memory.store.ports.review import DisputeQuery

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


class Clock:
    """A clock the test moves by hand; each reading is a little later, so writes keep their order."""

    def __init__(self, start: datetime = T0) -> None:
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=1)
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def memory(
    mid: str,
    *,
    owner: str = "alice",
    scope: str | None = None,
    kind: Kind = Kind.FACT,
    rank: Rank = Rank.AGENT,
    source: dict[str, Any] | None = None,
    live: bool = True,
) -> Memory:
    """A memory value, not stored: for the pure predicates."""
    return Memory(
        id=mid,
        owner=owner,
        scope=scope or f"user.{owner}",
        kind=kind,
        content=f"content of {mid}",
        author_kind=AuthorKind.AGENT,
        agent_name="test",
        rank=rank,
        source=source or {},
        created_at=T0,
        updated_at=T0,
        status=Status.LIVE if live else Status.INVALIDATED,
    )


def row(app: App, memory_id: str) -> Memory:
    with system_tx(app.store, "tests") as tx:
        found = tx.get_memory(memory_id, SYSTEM)
    assert found is not None
    return found


def disputes(app: App, owner: str = "alice", status: DisputeStatus | None = None) -> list[Dispute]:
    """Every review-queue row of an owner (any status unless one is named)."""
    with system_tx(app.store, "tests") as tx:
        return tx.list_disputes(DisputeQuery(owner=owner, status=status, limit=1000))


def dispute_of(app: App, a: str, b: str) -> Dispute | None:
    with system_tx(app.store, "tests") as tx:
        return tx.dispute_for_pair(pair_key(a, b))


def links(app: App, memory_id: str) -> list[Link]:
    with system_tx(app.store, "tests") as tx:
        return tx.links_of(memory_id)


def link_types(app: App, a: str, b: str) -> set[str]:
    return {lk.type for lk in links(app, a) if {lk.src, lk.dst} == {a, b}}


def audit(app: App, memory_id: str) -> list[AuditEntry]:
    with system_tx(app.store, "tests") as tx:
        return tx.audit_for_memory(memory_id)


def audit_actions(app: App, action: str) -> list[AuditEntry]:
    with system_tx(app.store, "tests") as tx:
        return tx.audit_actions(action)


def asked(judge: FakeJudge) -> list[frozenset[str]]:
    """The pairs a fake judge was asked about, by content."""
    return [frozenset((r.a.content, r.b.content)) for r in judge.requests if isinstance(r, PairRequest)]


def pair(*contents: str) -> frozenset[str]:
    return frozenset(contents)
