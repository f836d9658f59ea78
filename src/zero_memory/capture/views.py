"""An owner's staged chunks as they may see them: states and counts, never the text."""

from __future__ import annotations

from collections.abc import Iterable

from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.capture.models import ChunkView
from zero_memory.clock import to_text
from zero_memory.domain.records import CaptureChunk, ChunkStatus


def chunk_views(app: App, caller: Caller, *, status: ChunkStatus | None = None, limit: int = 50) -> list[ChunkView]:
    with app.store.tx() as tx:
        tx.act_as(caller.uid)
        chunks = tx.list_chunks(owner=caller.uid, status=status, limit=limit)
    return [view(c) for c in chunks]


def chunks_by_id(app: App, caller: Caller, ids: Iterable[str]) -> list[ChunkView]:
    """The caller's chunks among ``ids``, in the order given; another owner's are not there."""
    with app.store.tx() as tx:
        tx.act_as(caller.uid)
        found = [tx.get_chunk(chunk_id) for chunk_id in ids]
    return [view(c) for c in found if c is not None and c.owner == caller.uid]


def view(chunk: CaptureChunk) -> ChunkView:
    return ChunkView(
        id=chunk.id,
        chunk_hash=chunk.chunk_hash,
        conversation_id=chunk.conversation_id,
        client=chunk.client,
        scope=chunk.scope,
        status=chunk.status,
        chars=chunk.chars,
        attempts=chunk.attempts,
        last_error=chunk.last_error,
        statements=chunk.statements,
        created=chunk.created,
        yielded=chunk.yielded,
        absorbed=chunk.absorbed,
        refused=chunk.refused,
        input_tokens=chunk.input_tokens,
        output_tokens=chunk.output_tokens,
        created_at=to_text(chunk.created_at),
        finished_at=to_text(chunk.finished_at) if chunk.finished_at else None,
    )
