"""Accepting a conversation chunk: ``ingest_conversation`` and ``zm ingest``.

In order, before anything is stored or sent: the chunk's size and text, the
content guard on the whole chunk (a chunk holding a credential is refused
whole), the hash, then — unless the owner staged this chunk before — an
extraction model, the owner's daily allowance, the bounded backlog and the
write target (the session's project). Then one staging row, and the answer;
extraction runs in the background.
"""

from __future__ import annotations

from datetime import datetime
from functools import partial

from zero_memory import errors
from zero_memory.access.caller import Caller
from zero_memory.access.visibility import visibility
from zero_memory.app import App
from zero_memory.capture import budget
from zero_memory.capture.chunks import chunk_hash, split
from zero_memory.capture.extract import drain
from zero_memory.capture.models import IngestRequest, IngestResult, IngestStatus
from zero_memory.domain.records import CaptureChunk, ChunkStatus
from zero_memory.ids import new_id
from zero_memory.judge.owners import judge_for
from zero_memory.memory.targets import session_state, write_target
from zero_memory.memory.validation import check_fields, check_text

NO_MODEL = (
    "no extraction model is configured: set ZM_JUDGE_PROVIDER (and ZM_JUDGE_API_KEY, ZM_EXTRACT_MODEL) "
    "to turn capture on"
)


def ingest(app: App, caller: Caller, req: IngestRequest) -> IngestResult:
    """Stage one chunk for extraction and answer at once; the same chunk again changes nothing."""
    config = app.settings.capture
    text = req.transcript_chunk
    if len(text) > config.max_chunk_chars:
        raise errors.validation(
            f"transcript_chunk: {len(text)} characters is over the limit of {config.max_chunk_chars}; "
            "send the conversation in smaller chunks"
        )
    check_text("transcript_chunk", text, max_chars=config.max_chunk_chars)
    check_fields(
        {
            "transcript_chunk": text,
            "conversation_id": req.conversation_id,
            "client": req.client,
            "project_hint": req.project_hint,
        }
    )
    digest = chunk_hash(text)
    if req.chunk_hash is not None and req.chunk_hash != digest:
        raise errors.validation("chunk_hash: is not the SHA-256 of transcript_chunk's UTF-8 bytes (lowercase hex)")
    owner = caller.uid
    with app.store.tx() as tx:
        tx.act_as(owner)
        existing = tx.chunk_by_hash(owner, digest)
    if existing is not None and existing.status is not ChunkStatus.FAILED:
        if existing.status is ChunkStatus.PENDING:
            # It may have waited for an allowance raised since: the owner's pass takes it up if so.
            app.background(partial(drain, app, owner=owner))
        return _result(existing, "duplicate")

    if judge_for(app.judge_factory, owner).offer_mode:
        raise errors.unavailable(NO_MODEL)
    now = app.clock()
    budget.require(app, owner, now)
    scope = _target(app, caller, req, now)
    staged = _stage(app, caller, req, digest, scope, existing, now)
    if staged[1] != "duplicate":
        app.background(partial(drain, app, owner=owner))
    return _result(*staged)


def ingest_text(
    app: App, caller: Caller, text: str, *, conversation_id: str, client: str | None, project_hint: str | None
) -> list[IngestResult]:
    """A conversation of any length: guarded whole, then staged in chunks cut at line ends."""
    check_text("transcript", text, max_chars=max(len(text), 1))
    check_fields({"transcript": text})
    pieces = split(text, app.settings.capture.max_chunk_chars)
    return [
        ingest(
            app,
            caller,
            IngestRequest(
                transcript_chunk=piece, conversation_id=conversation_id, client=client, project_hint=project_hint
            ),
        )
        for piece in pieces
    ]


def _target(app: App, caller: Caller, req: IngestRequest, now: datetime) -> str:
    """The project the statements go to: the hint, else the conversation's session, else the caller's."""
    with app.store.tx(write=True) as tx:
        vis = visibility(tx, caller.uid)
        auto_create = app.settings.auto_create_projects
        session, hinted = session_state(tx, vis, req.conversation_id, req.project_hint, auto_create=auto_create, at=now)
        if hinted is None and session.attached is None and caller.session_id:
            session, _ = session_state(tx, vis, caller.session_id, None, auto_create=auto_create, at=now)
        return write_target(tx, vis, None, hinted, session)


def _stage(
    app: App,
    caller: Caller,
    req: IngestRequest,
    digest: str,
    scope: str,
    existing: CaptureChunk | None,
    now: datetime,
) -> tuple[CaptureChunk, IngestStatus]:
    config = app.settings.capture
    text = req.transcript_chunk
    status: IngestStatus
    with app.store.tx(write=True) as tx:
        tx.act_as(caller.uid)
        tx.serialize(f"capture:{caller.uid}")
        if existing is not None:
            if not tx.rearm_chunk(existing.id, text, scope, now):
                return _current(tx.get_chunk(existing.id), existing), "duplicate"
            chunk, status = _current(tx.get_chunk(existing.id), existing), "requeued"
        else:
            waiting = tx.count_waiting_chunks(caller.uid)
            if waiting >= config.max_pending_chunks:
                raise errors.unavailable(
                    f"{waiting} chunks are already waiting for extraction (the most one owner may have); "
                    "send this one again later"
                )
            chunk = CaptureChunk(
                id=new_id("chk"),
                owner=caller.uid,
                chunk_hash=digest,
                conversation_id=req.conversation_id,
                client=req.client or caller.client,
                scope=scope,
                transcript=text,
                chars=len(text),
                status=ChunkStatus.PENDING,
                next_attempt_at=now,
                created_at=now,
                updated_at=now,
            )
            if not tx.add_chunk(chunk):
                # The same chunk, staged by a concurrent call between our look and now.
                found = tx.chunk_by_hash(caller.uid, digest)
                return _current(found, chunk), "duplicate"
            status = "accepted"
        tx.add_audit(
            actor=caller.uid,
            action="capture.ingest",
            owner=caller.uid,
            memory_ids=[],
            payload={
                "chunk": chunk.id,
                "status": status,
                "chars": len(text),
                "client": chunk.client,
                "conversation_id": req.conversation_id,
                "scope": scope,
            },
            run_id=None,
            at=now,
        )
    return chunk, status


def _current(found: CaptureChunk | None, fallback: CaptureChunk) -> CaptureChunk:
    return found if found is not None else fallback


def _result(chunk: CaptureChunk, status: IngestStatus) -> IngestResult:
    return IngestResult(
        chunk_id=chunk.id,
        chunk_hash=chunk.chunk_hash,
        status=status,
        extraction=chunk.status,
        scope=chunk.scope,
        conversation_id=chunk.conversation_id,
        chars=chunk.chars,
    )


__all__ = ["ingest", "ingest_text"]
