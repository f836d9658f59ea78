"""What the capture services take and return (the MCP tool's and the CLI's contract)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from zero_memory.domain.records import ChunkStatus

IngestStatus = Literal["accepted", "duplicate", "requeued"]
HASH_PATTERN = r"^[0-9a-f]{64}$"


class IngestRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    transcript_chunk: str
    conversation_id: str = Field(min_length=1, max_length=500)
    chunk_hash: str | None = Field(default=None, pattern=HASH_PATTERN)
    client: str | None = Field(default=None, max_length=100)
    project_hint: str | None = None


class IngestResult(BaseModel):
    chunk_id: str
    chunk_hash: str
    status: IngestStatus
    extraction: ChunkStatus
    scope: str
    conversation_id: str
    chars: int


class ChunkView(BaseModel):
    """A staged chunk as its owner sees it: never its text."""

    id: str
    chunk_hash: str
    conversation_id: str
    client: str
    scope: str
    status: ChunkStatus
    chars: int
    attempts: int
    last_error: str | None
    statements: int
    created: int
    yielded: int
    absorbed: int
    refused: int
    input_tokens: int
    output_tokens: int
    created_at: str
    finished_at: str | None


class BudgetStatus(BaseModel):
    user: str
    daily_tokens: int
    source: Literal["user", "server"]
    spent_today: int
    remaining: int
    resets_at: str


class HookReport(BaseModel):
    """What one run of a client hook sent."""

    client: str
    session: str
    turns: int
    withheld_turns: int
    chars: int
    chunks: list[IngestResult] = Field(default_factory=list)
    offset: int | None = None
