"""The shapes the memory services take and return.

These pydantic models are the contract of the memory tools: the MCP server
returns them as structured content (and so publishes their output schemas),
the CLI prints them with ``--json``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from zero_memory.domain.anchors import MAX_ANCHORS, MAX_PATH_LENGTH, MAX_SYMBOL_LENGTH
from zero_memory.domain.memory import Kind

WriteStatus = Literal["created", "absorbed", "yielded"]
DeclarableLink = Literal["supersedes", "relates_to", "derived_from"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LinkSpec(Strict):
    type: DeclarableLink
    dst: str = Field(min_length=1, max_length=100)


class SourceSpec(Strict):
    thread: str | None = Field(default=None, max_length=500)
    client_session_id: str | None = Field(default=None, max_length=500)
    imported_from: str | None = Field(default=None, max_length=1000)
    client: str | None = Field(default=None, max_length=200)
    conversation_id: str | None = Field(default=None, max_length=500)
    chunk_hash: str | None = Field(default=None, max_length=100)


class AnchorSpec(Strict):
    """An anchor as a writer names it."""

    path: str = Field(
        min_length=1,
        max_length=MAX_PATH_LENGTH,
        description="A file, relative to the repository's root (src/net/client.py).",
    )
    symbol: str | None = Field(
        default=None,
        max_length=MAX_SYMBOL_LENGTH,
        description="A function, class, method (Class.method) or top-level constant in that file.",
    )


class AnchorView(BaseModel):
    """An anchor as the tools show it."""

    path: str
    symbol: str | None = None
    origin: str
    state: str
    commit: str | None = None
    drift: str | None = None


class SessionInfo(BaseModel):
    attached_project: str | None
    session_id: str | None


class SimilarMemory(BaseModel):
    id: str
    scope: str
    kind: Kind
    similarity: float
    age_days: float
    preview: str


class SkippedLink(BaseModel):
    dst: str
    type: str
    reason: Literal["missing", "not_live", "self"]


class RememberRequest(Strict):
    content: str
    kind: Kind
    scope: str | None = None
    project_hint: str | None = None
    session_id: str | None = Field(default=None, max_length=500)
    links: list[LinkSpec] = Field(default_factory=list)
    provisional: bool = False
    source: SourceSpec | None = None
    anchors: list[AnchorSpec] = Field(default_factory=list, max_length=MAX_ANCHORS)


class RememberResult(BaseModel):
    id: str
    status: WriteStatus
    scope: str
    rank: int
    superseded: list[str] = Field(default_factory=list)
    skipped_links: list[SkippedLink] = Field(default_factory=list)
    similar_existing: list[SimilarMemory] = Field(default_factory=list)
    hint: str | None = None
    routed_to_project: dict[str, str] | None = None
    length_directive: str | None = None
    anchors: list[AnchorView] = Field(default_factory=list)
    session: SessionInfo


class Hit(BaseModel):
    id: str
    content: str
    kind: Kind
    scope: str
    rank: int
    author_kind: str
    agent_name: str
    score: float
    age_days: float
    disputed: bool
    stale_days: int | None = None
    # The code the memory describes ("path::symbol"), and the commits between which it changed since it was
    # last verified ("FROM..TO"): re-check such a memory against the code before relying on it.
    anchors: list[str] = Field(default_factory=list)
    code_changed: str | None = None


class RecallResult(BaseModel):
    hits: list[Hit]
    session: SessionInfo


class MemoryView(BaseModel):
    id: str
    content: str
    kind: Kind
    scope: str
    rank: int
    author_kind: str
    agent_name: str
    source: dict[str, Any]
    status: str
    invalidated_reason: str | None
    superseded_by: str | None
    original_scope: str | None
    created_at: str
    updated_at: str
    age_days: float
    disputed: bool
    pinned: bool = False
    restored: bool = False
    # A core fact or reference past its freshness budget (from creation or its latest re-affirmation).
    stale_days: int | None = None


class LinkView(BaseModel):
    type: str
    src: str
    dst: str
    created_at: str
    created_by: str


class HistoryEntry(BaseModel):
    id: str
    content: str
    kind: Kind
    status: str
    invalidated_reason: str | None
    created_at: str
    depth: int


class AuditView(BaseModel):
    at: str
    actor: str
    action: str
    memory_ids: list[str]
    payload: dict[str, Any]
    run_id: str | None


class DisputeRef(BaseModel):
    id: str
    shape: str
    verdict: str
    origin: str
    status: str
    memory_a: str
    memory_b: str | None
    reason: str | None = None


class GetMemoryResult(BaseModel):
    memory: MemoryView
    links: list[LinkView]
    history: list[HistoryEntry]
    anchors: list[AnchorView] = Field(
        default_factory=list, description="The code the memory describes, and what verification last found of it."
    )
    audit: list[AuditView] = Field(description="The audit trail, newest first; one page of it.")
    disputes: list[DisputeRef]
    next_cursor: str | None = Field(
        default=None, description="Older audit rows remain: pass this as cursor for the next page."
    )


class LifecycleResult(BaseModel):
    id: str
    status: str
    changed: bool
    invalidated_reason: str | None = None
    removed_links: list[str] = Field(default_factory=list)


class ReaffirmResult(BaseModel):
    id: str
    stale_days_before: int | None
    reaffirmed_at: str


class MoveFailure(BaseModel):
    id: str
    error: str


class MoveResult(BaseModel):
    moved: list[str]
    unchanged: list[str]
    failed: list[MoveFailure]
    scope: str


class LinkResult(BaseModel):
    src: str
    dst: str
    type: str
    created: bool
