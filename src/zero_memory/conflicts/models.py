"""The shapes of the conflict tools (docs/spec/tools.md "Hygiene and conflict tools")."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from zero_memory.domain.memory import Kind


class ConflictMemory(BaseModel):
    id: str
    content: str
    kind: Kind
    scope: str
    rank: int
    age_days: float
    author_kind: str
    agent_name: str
    status: str
    # Once restored after an invalidation: the triage rule keeps it (keep both, or it wins).
    restored: bool = False


class Proposal(BaseModel):
    """What the retro pass would have done automatically: invalidate ``loser``, superseded by ``winner``.

    Settling the row with ``accept`` carries it out (the same as ``winner``)."""

    action: Literal["invalidate"]
    winner: str
    loser: str
    reason: str


class Conflict(BaseModel):
    id: str
    shape: Literal["pair", "single"]
    verdict: str
    direction: str | None = None
    confidence: float | None = None
    rationale: str | None = None
    model: str | None = None
    origin: str
    status: str
    created_at: str
    reason: str | None = None
    memory_a: ConflictMemory
    memory_b: ConflictMemory | None = None
    resolution: dict[str, Any] | None = None
    proposal: Proposal | None = None


class ConflictList(BaseModel):
    conflicts: list[Conflict]
    pending_count: int
    next_cursor: str | None


class Resolution(BaseModel):
    dispute_id: str
    status: Literal["resolved"]
    resolution: dict[str, Any]
    invalidated: list[str] = Field(default_factory=list)
    created: str | None = None


class BulkItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    dispute_id: str = Field(max_length=100)
    winner: str | None = Field(default=None, max_length=100)
    retire: bool | None = None


class Policy(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Literal["newest_wins", "oldest_wins", "keep_both"]
    verdict: str | None = None


class BulkFailure(BaseModel):
    dispute_id: str
    error: str


class BulkResult(BaseModel):
    resolved: list[str]
    skipped: list[str]
    failed: list[BulkFailure]


class ChallengeResult(BaseModel):
    dispute_id: str
    created: bool
