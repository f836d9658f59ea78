"""Rows and vectors for store tests: deterministic, small, built by hand."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from zero_memory.domain.memory import AuthorKind, Brief, InvalidationReason, Kind, Memory, Rank, Status
from zero_memory.domain.records import User, Visibility
from zero_memory.ids import memory_id
from zero_memory.store import Tx

DIM = 16
T0 = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)


def at(minutes: float = 0) -> datetime:
    return T0 + timedelta(minutes=minutes)


def axis(i: int, dim: int = DIM) -> np.ndarray:
    v = np.zeros(dim, dtype=np.float32)
    v[i] = 1.0
    return v


def toward(similarity: float, *, base: int = 0, other: int = 1, dim: int = DIM) -> np.ndarray:
    """A unit vector whose cosine similarity with ``axis(base)`` is exactly ``similarity``."""
    v = np.zeros(dim, dtype=np.float32)
    v[base] = similarity
    v[other] = math.sqrt(max(0.0, 1.0 - similarity * similarity))
    return v


def random_unit(seed: int, dim: int = DIM) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return (v / np.linalg.norm(v)).astype(np.float32)


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode()).hexdigest()


def user(uid: str = "alice", *, minutes: float = 0, local: bool = False) -> User:
    return User(uid, uid.title(), at(minutes), is_local=local)


def memory(
    content: str = "The API listens on port 8080.",
    *,
    owner: str = "alice",
    scope: str = "proj.alice.api",
    kind: Kind = Kind.FACT,
    minutes: float = 0,
    id: str | None = None,
    status: Status = Status.LIVE,
    reason: InvalidationReason | None = None,
    source: dict[str, Any] | None = None,
    rank: Rank = Rank.AGENT,
) -> Memory:
    return Memory(
        id=id or memory_id(),
        owner=owner,
        scope=scope,
        kind=kind,
        content=content,
        content_hash=content_hash(content),
        author_kind=AuthorKind.AGENT,
        agent_name="claude-code",
        rank=rank,
        source=source if source is not None else {"client": "claude-code"},
        created_at=at(minutes),
        updated_at=at(minutes),
        status=status,
        invalidated_reason=reason,
    )


def visibility(uid: str, *scopes: str) -> Visibility:
    return Visibility(uid, frozenset(scopes), frozenset(scopes))


def add_users(tx: Tx, *uids: str) -> None:
    for n, uid in enumerate(uids):
        tx.add_user(user(uid, minutes=n))


def put(tx: Tx, m: Memory, vector: np.ndarray | None = None, model: str = "test-model") -> Memory:
    tx.insert_memory(m, axis(0) if vector is None else vector, model)
    return m


class AsSystem:
    """A real store whose every transaction acts as the named system pass ``store-test``.

    The contract cases exercise the port itself, across owners, as the hygiene
    passes do; on PostgreSQL they run with row-level security on, under the
    system mode (tests/store/test_row_security.py is where a transaction acts
    for a user).
    """

    def __init__(self, store: Any) -> None:
        self._store = store

    @contextmanager
    def tx(self, *, write: bool = False) -> Iterator[Tx]:
        with self._store.tx(write=write) as tx:
            tx.act_as_system("store-test")
            yield tx

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "_store":
            object.__setattr__(self, name, value)
        else:
            setattr(self._store, name, value)


def brief_of(memory: Memory) -> Brief:
    """The brief a store reads of a memory: what recall ranks on."""
    return Brief(
        memory.id,
        memory.scope,
        memory.kind,
        memory.content,
        memory.author_kind,
        memory.agent_name,
        memory.rank,
        memory.created_at,
        memory.status,
    )
