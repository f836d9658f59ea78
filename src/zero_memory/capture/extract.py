"""Extraction: one staged chunk through the extraction model, each statement through the write path.

A chunk is claimed with a lease, so two processes never extract it at once
and a process that dies mid-way leaves it to the next one. The model is the
owner's (``judge.owners.judge_for``: their key, their ledger rows, purpose
``extract``), asked under the judge's fail-closed contract: a timeout, an
error or a broken answer extracts nothing and the chunk is tried again later
(``route.after_failure``), until it is given up with status ``failed``.

Every statement of a good answer is an ordinary ``remember`` with
``provisional: true`` (rank 0), ``agent_name`` ``extraction`` and the
conversation and chunk hash as its source: it yields to an authoritative
memory saying the same, an exact repeat is absorbed, a statement holding a
credential is refused by the content guard. Then the chunk's text is dropped.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from zero_memory import errors
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.capture import budget, route
from zero_memory.domain.records import CaptureChunk, ChunkStatus
from zero_memory.domain.verdicts import ExtractedStatement
from zero_memory.judge.base import Judged, JudgeFailure, Unjudged, Usage
from zero_memory.judge.owners import judge_for
from zero_memory.judge.provider import redact
from zero_memory.judge.questions.extraction import ExtractionRequest
from zero_memory.memory.models import RememberRequest, SourceSpec
from zero_memory.memory.write import remember
from zero_memory.store import system_tx

log = logging.getLogger(__name__)

EXTRACTION_CLIENT = "extraction"
"""The ``agent_name`` of every captured memory (the dashboard's "provisional · extraction" badge)."""
ACTOR = "capture.extract"
"""The system pass named in the audit rows of extraction attempts."""
DRAIN_BATCH = 50


@dataclass
class Extraction:
    """What one attempt at a chunk did."""

    chunk_id: str
    status: ChunkStatus
    created: list[str] = field(default_factory=list)
    yielded: list[str] = field(default_factory=list)
    absorbed: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def memory_ids(self) -> list[str]:
        return list(dict.fromkeys([*self.created, *self.yielded, *self.absorbed]))


def drain(app: App, *, owner: str | None = None, limit: int = DRAIN_BATCH) -> list[Extraction]:
    """Extract every chunk that is due (of one owner, or of everyone), oldest first; chunks that waited for
    an allowance raised since are due again."""
    budget.release(app, app.clock(), owner=owner)
    with system_tx(app.store, "capture") as tx:
        due = tx.due_chunks(at=app.clock(), owner=owner, limit=limit)
    done = []
    for chunk_id in due:
        try:
            outcome = extract_chunk(app, chunk_id)
        except Exception:
            # The chunk keeps its lease and is taken up again when the lease runs out.
            log.exception("extracting chunk %s failed", chunk_id)
            continue
        if outcome is not None:
            done.append(outcome)
    return done


def extract_chunk(app: App, chunk_id: str) -> Extraction | None:
    """One attempt at one chunk; None when it is not due or another process holds it."""
    config = app.settings.capture
    now = app.clock()
    with system_tx(app.store, "capture", write=True) as tx:
        chunk = tx.claim_chunk(chunk_id, at=now, lease_until=now + timedelta(seconds=config.lease_s))
    if chunk is None or chunk.transcript is None:
        return None
    allowance = budget.status(app, chunk.owner, now)
    if allowance.remaining <= 0:
        # Not an attempt: the chunk waits, untouched, for tomorrow's allowance or a raise (budget.release).
        error = f"{budget.WAITING} waiting for {allowance.resets_at}"
        _update(app, chunk, status=ChunkStatus.PENDING, next_attempt_at=route.next_day(now), error=error)
        return Extraction(chunk.id, ChunkStatus.PENDING, error=error)
    result = judge_for(app.judge_factory, chunk.owner).ask(ExtractionRequest(chunk.transcript))
    if isinstance(result, Judged):
        return _store(app, chunk, result.answer.statements, result.usage)
    return _failed(app, chunk, result, app.clock())


def _store(app: App, chunk: CaptureChunk, statements: Sequence[ExtractedStatement], usage: Usage) -> Extraction:
    outcome = Extraction(chunk.id, ChunkStatus.DONE)
    caller = Caller(uid=chunk.owner, client=EXTRACTION_CLIENT, author_kind="system")
    source = SourceSpec(conversation_id=chunk.conversation_id, chunk_hash=chunk.chunk_hash, client=chunk.client)
    for statement in statements:
        request = RememberRequest(
            content=statement.content,
            kind=statement.kind,
            scope=route.target(statement, chunk.scope),
            provisional=True,
            source=source,
        )
        try:
            written = remember(app, caller, request)
        except errors.ZMError as error:
            # The code only: the message may describe what the guard found.
            outcome.refused.append(error.subcode or error.code.value)
            continue
        {"created": outcome.created, "yielded": outcome.yielded, "absorbed": outcome.absorbed}[written.status].append(
            written.id
        )
    now = app.clock()
    with system_tx(app.store, "capture", write=True) as tx:
        tx.update_chunk(
            chunk.id,
            now,
            status=ChunkStatus.DONE,
            transcript=None,
            lease_until=None,
            last_error=None,
            statements=len(statements),
            created=len(outcome.created),
            yielded=len(outcome.yielded),
            absorbed=len(outcome.absorbed),
            refused=len(outcome.refused),
            input_tokens=chunk.input_tokens + usage.input_tokens,
            output_tokens=chunk.output_tokens + usage.output_tokens,
            finished_at=now,
        )
        tx.add_audit(
            actor=ACTOR,
            action="capture.extract",
            owner=chunk.owner,
            memory_ids=outcome.memory_ids,
            payload={
                "chunk": chunk.id,
                "model": usage.model,
                "statements": len(statements),
                "created": len(outcome.created),
                "yielded": len(outcome.yielded),
                "absorbed": len(outcome.absorbed),
                "refused": outcome.refused,
            },
            run_id=None,
            at=now,
        )
    return outcome


def _failed(app: App, chunk: CaptureChunk, result: JudgeFailure | Unjudged, now: datetime) -> Extraction:
    attempts = chunk.attempts + 1
    plan = route.after_failure(attempts, app.settings.capture, now)
    if isinstance(result, JudgeFailure):
        error = redact(f"{result.kind}: {result.detail}")
    else:
        error = "unavailable: no extraction model is configured"
    usage = result.usage or Usage(model="none")
    gave_up = plan.status is ChunkStatus.FAILED
    with system_tx(app.store, "capture", write=True) as tx:
        tx.update_chunk(
            chunk.id,
            now,
            status=plan.status,
            attempts=attempts,
            next_attempt_at=plan.next_attempt_at,
            lease_until=None,
            last_error=error,
            input_tokens=chunk.input_tokens + usage.input_tokens,
            output_tokens=chunk.output_tokens + usage.output_tokens,
            **({"transcript": None, "finished_at": now} if gave_up else {}),
        )
        tx.add_audit(
            actor=ACTOR,
            action="capture.give_up" if gave_up else "capture.retry",
            owner=chunk.owner,
            memory_ids=[],
            payload={"chunk": chunk.id, "attempts": attempts, "error": error, "model": usage.model},
            run_id=None,
            at=now,
        )
    return Extraction(chunk.id, plan.status, error=error)


def _update(app: App, chunk: CaptureChunk, *, status: ChunkStatus, next_attempt_at: datetime, error: str) -> None:
    with system_tx(app.store, "capture", write=True) as tx:
        tx.update_chunk(
            chunk.id, app.clock(), status=status, next_attempt_at=next_attempt_at, lease_until=None, last_error=error
        )
