"""The other rows of the store: users, projects, links, audit entries, disputes, judgements, portability
candidacies, runs, capture chunks."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from zero_memory.domain.scopes import Role


@dataclass(frozen=True, slots=True)
class User:
    id: str
    display_name: str
    created_at: datetime
    is_local: bool = False


@dataclass(frozen=True, slots=True)
class Project:
    scope: str
    owner: str
    kind: str
    slug: str
    path: str | None
    remote: str | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Membership:
    scope: str
    user_id: str
    role: Role


@dataclass(frozen=True, slots=True)
class Link:
    id: str
    src: str
    dst: str
    type: str
    created_at: datetime
    created_by: str
    run_id: str | None = None
    removed_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class AuditEntry:
    seq: int
    at: datetime
    actor: str
    action: str
    owner: str | None
    memory_ids: list[str]
    payload: dict[str, Any]
    run_id: str | None = None


class DisputeShape(StrEnum):
    PAIR = "pair"
    SINGLE = "single"


class DisputeStatus(StrEnum):
    PENDING = "pending"
    RESOLVED = "resolved"
    DISMISSED = "dismissed"


@dataclass(frozen=True, slots=True)
class Dispute:
    id: str
    owner: str
    shape: DisputeShape
    verdict: str
    origin: str
    status: DisputeStatus
    memory_a: str
    created_at: datetime
    memory_b: str | None = None
    direction: str | None = None
    confidence: float | None = None
    rationale: str | None = None
    model: str | None = None
    pair_key: str | None = None
    reason: str | None = None
    run_id: str | None = None
    resolved_at: datetime | None = None
    resolved_by: str | None = None
    resolution: dict[str, Any] = field(default_factory=dict)
    # A retro row's proposal: what the pass would have done automatically (hygiene/decide.py).
    proposal: dict[str, Any] | None = None

    @property
    def pending(self) -> bool:
        return self.status is DisputeStatus.PENDING

    @classmethod
    def single(
        cls,
        dispute_id: str,
        *,
        owner: str,
        verdict: str,
        origin: str,
        memory_id: str,
        at: datetime,
        reason: str,
        run_id: str | None = None,
        confidence: float | None = None,
        rationale: str | None = None,
        model: str | None = None,
    ) -> Dispute:
        """A pending single-subject row (``challenged``, ``stale_suspect``, ``outdated``) about one memory."""
        return cls(
            id=dispute_id,
            owner=owner,
            shape=DisputeShape.SINGLE,
            verdict=verdict,
            origin=origin,
            status=DisputeStatus.PENDING,
            memory_a=memory_id,
            created_at=at,
            reason=reason,
            run_id=run_id,
            confidence=confidence,
            rationale=rationale,
            model=model,
        )


@dataclass(frozen=True, slots=True)
class Judgement:
    """A judge's answer about a pair, cached by pair key and model (``judgements``)."""

    verdict: str
    confidence: float
    rationale: str
    model: str


@dataclass(frozen=True, slots=True)
class PortabilityCandidate:
    """A personal memory proposed for a project scope, until a person settles it (``portability_candidates``)."""

    id: str
    memory_id: str
    owner: str
    status: str
    original_scope: str
    created_at: datetime
    confidence: float | None = None
    rationale: str | None = None
    model: str | None = None
    run_id: str | None = None
    resolved_at: datetime | None = None
    resolved_by: str | None = None


class Channel(StrEnum):
    """How a surfaced memory reached its reader (the ``channel`` of a surfacing).

    ``recall``: an agent's recall over MCP, the only channel that reinforces a
    memory's ranking; ``cli``: ``zm recall`` from a shell, counted as traffic for
    re-examination but never as evidence; ``briefing``: what ``build_context``
    served unasked at the start of a session, traffic for re-examination, never
    reinforcement. The dashboard records nothing.
    """

    RECALL = "recall"
    CLI = "cli"
    BRIEFING = "briefing"


class RunStatus(StrEnum):
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    INTERRUPTED = "interrupted"


class ChunkStatus(StrEnum):
    """Where a staged transcript chunk is: waiting, being extracted, done, or given up."""

    PENDING = "pending"
    EXTRACTING = "extracting"
    DONE = "done"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class CaptureChunk:
    """A transcript chunk staged for extraction (``capture_chunks``); ``transcript`` is None once it is not needed."""

    id: str
    owner: str
    chunk_hash: str
    conversation_id: str
    client: str
    scope: str
    transcript: str | None
    chars: int
    status: ChunkStatus
    next_attempt_at: datetime
    created_at: datetime
    updated_at: datetime
    attempts: int = 0
    lease_until: datetime | None = None
    last_error: str | None = None
    statements: int = 0
    created: int = 0
    yielded: int = 0
    absorbed: int = 0
    refused: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    finished_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Run:
    id: str
    owner: str | None
    kind: str
    status: RunStatus
    dry_run: bool
    started_by: str
    started_at: datetime
    finished_at: datetime | None
    summary: dict[str, Any]

    @classmethod
    def running(
        cls, run_id: str, *, owner: str | None, kind: str, started_by: str, at: datetime, dry_run: bool = False
    ) -> Run:
        """A run as it starts: running, unfinished, nothing counted yet."""
        return cls(run_id, owner, kind, RunStatus.RUNNING, dry_run, started_by, at, None, {})


@dataclass(frozen=True, slots=True)
class Visibility:
    """Who is asking and which scopes they may read and write.

    Every query of memories takes one; an id outside ``readable`` answers
    exactly as a missing id does.
    """

    uid: str
    readable: frozenset[str]
    writable: frozenset[str]

    def can_read(self, scope: str) -> bool:
        return scope in self.readable

    def can_write(self, scope: str) -> bool:
        return scope in self.writable


def pair_key(a: str, b: str) -> str:
    """The order-free key of a pair of memory ids."""
    lo, hi = sorted((a, b))
    return f"{lo}|{hi}"
