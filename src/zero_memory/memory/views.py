"""Turning stored rows into the views the tools return."""

from __future__ import annotations

from datetime import datetime

from zero_memory.clock import to_text
from zero_memory.domain.memory import Memory, age_days
from zero_memory.memory.models import MemoryView, SimilarMemory

PREVIEW_CHARS = 200


def preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 1] + "…"


def memory_view(
    memory: Memory, now: datetime, *, disputed: bool, pinned: bool = False, stale_days: int | None = None
) -> MemoryView:
    return MemoryView(
        id=memory.id,
        content=memory.content,
        kind=memory.kind,
        scope=memory.scope,
        rank=int(memory.rank),
        author_kind=memory.author_kind.value,
        agent_name=memory.agent_name,
        source=memory.source,
        status=memory.status.value,
        invalidated_reason=memory.invalidated_reason.value if memory.invalidated_reason else None,
        superseded_by=memory.superseded_by,
        original_scope=memory.original_scope,
        created_at=to_text(memory.created_at),
        updated_at=to_text(memory.updated_at),
        age_days=round(age_days(memory.created_at, now), 3),
        disputed=disputed,
        pinned=pinned,
        restored=memory.restored,
        stale_days=stale_days,
    )


def similar_view(memory: Memory, similarity: float, now: datetime) -> SimilarMemory:
    return SimilarMemory(
        id=memory.id,
        scope=memory.scope,
        kind=memory.kind,
        similarity=round(similarity, 4),
        age_days=round(age_days(memory.created_at, now), 3),
        preview=preview(memory.content),
    )
