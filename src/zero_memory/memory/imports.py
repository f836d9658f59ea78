"""Curated import: a JSONL file or a folder of Markdown files, as rank-1 memories.

Streamed: records are read, embedded and written a batch at a time, and the
report keeps counts, so an import of a million memories runs in bounded memory.
The next ``EMBED_AHEAD`` batches are guarded on threads and embedded side by
side in as many forked child processes (embedding/apart.py) while the one
before them is written; the writes stay in order, one batch at a time, in the
caller's thread, so what is stored, skipped and reported is what a
batch-after-batch import gives.
A batch is one transaction under the owner's write lock (remember's, so a
remember or another import by the same owner waits and then sees it): one
look-up of its hashes, one insert of its new memories and one of their audit
rows, a row each. A batch that fails is written not at all and counted not at
all; the batches before it stay, and running the import again adds the rest.

Idempotent per content hash (an owner's text already stored, in any state, is
skipped); ``source.imported_from`` records the directory the memory came
from, which pins it to that project for the cross-project predicate. Every
text passes the content guard; a refused record is reported and the rest go on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from zero_memory import errors
from zero_memory.access.caller import Caller
from zero_memory.access.projects import resolve_hint
from zero_memory.access.visibility import visibility
from zero_memory.app import App
from zero_memory.domain.memory import AuthorKind, Kind, Memory, Rank, content_hash
from zero_memory.embedding import Embedder
from zero_memory.embedding.apart import embedding_apart
from zero_memory.ids import memory_id
from zero_memory.memory.ahead import worked_ahead
from zero_memory.memory.targets import SessionState, shorthand, write_target
from zero_memory.memory.validation import check_fields, check_text, invalid_input

BATCH = 256
# Batches guarded and embedded (a child process each) while the one before is written.
EMBED_AHEAD = 2
# The import's embedding children run this many steps below the caller's priority: recalls served meanwhile get
# the cores first (benchmarks/growth.py, docs/benchmarks.md).
IMPORT_NICENESS = 10
MAX_REPORTED_FAILURES = 1_000
FRONT_MATTER_RE = re.compile(r"\A---\s*\n(.*?)\n---\s*\n", re.DOTALL)


class ImportRecord(BaseModel):
    model_config = ConfigDict(extra="ignore")

    content: str
    kind: Kind = Kind.FACT
    scope: str | None = None
    source: dict[str, Any] = Field(default_factory=dict)


@dataclass
class ImportReport:
    """Counts, and the first ``MAX_REPORTED_FAILURES`` failures: an import of any size holds a bounded report."""

    imported: int = 0
    skipped: int = 0
    failed: list[dict[str, str]] = field(default_factory=list)
    failed_total: int = 0

    def fail(self, record: str, error: str) -> None:
        self.failed_total += 1
        if len(self.failed) < MAX_REPORTED_FAILURES:
            self.failed.append({"record": record, "error": error})

    def to_dict(self) -> dict[str, Any]:
        report: dict[str, Any] = {"imported": self.imported, "skipped": self.skipped, "failed": self.failed}
        if self.failed_total > len(self.failed):
            report["failed_total"] = self.failed_total
        return report


def read_records(path: Path) -> Iterator[tuple[str, ImportRecord | str, str]]:
    """(where, record or error, imported_from directory) for every record under a path.

    ``imported_from`` is the directory holding the record's file, so a folder of agents' per-project
    folders (``~/.claude/projects``) imported at once keeps each memory's project folder.
    """
    if path.is_dir():
        for file in sorted(path.rglob("*.md")):
            yield from _markdown(file, str(file.parent.resolve()))
        for file in sorted(path.rglob("*.jsonl")):
            yield from _jsonl(file, str(file.parent.resolve()))
    elif path.suffix == ".md":
        yield from _markdown(path, str(path.parent.resolve()))
    else:
        yield from _jsonl(path, str(path.parent.resolve()))


def _jsonl(file: Path, directory: str) -> Iterator[tuple[str, ImportRecord | str, str]]:
    with file.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            where = f"{file.name}:{number}"
            try:
                yield where, ImportRecord.model_validate(json.loads(line)), directory
            except json.JSONDecodeError as error:
                yield where, f"validation_failed: not a JSON line ({error.msg})", directory
            except ValidationError as error:
                yield where, str(invalid_input(error)), directory


def _markdown(file: Path, directory: str) -> Iterator[tuple[str, ImportRecord | str, str]]:
    text = file.read_text(encoding="utf-8")
    meta: dict[str, str] = {}
    match = FRONT_MATTER_RE.match(text)
    if match:
        for line in match.group(1).splitlines():
            key, _, value = line.partition(":")
            if key.strip():
                meta[key.strip()] = value.strip().strip("'\"")
        text = text[match.end() :]
    try:
        record = ImportRecord(content=text.strip(), kind=Kind(meta.get("kind", "fact")), scope=meta.get("scope"))
    except ValidationError as error:
        yield file.name, str(invalid_input(error)), directory
        return
    except ValueError:
        yield file.name, f"validation_failed: kind: not one of {', '.join(k.value for k in Kind)}", directory
        return
    yield file.name, record, directory


def import_path(
    app: App,
    caller: Caller,
    path: Path,
    *,
    scope: str | None = None,
    project_hint: str | None = None,
    advance: Callable[[int], None] = lambda n: None,
) -> ImportReport:
    if not path.exists():
        raise errors.validation(f"path: {path} does not exist")
    report = ImportReport()
    with (
        app.store.bulk_load(count_records(path)),
        embedding_apart(app.embedder, processes=max(EMBED_AHEAD, 1), niceness=IMPORT_NICENESS) as embedder,
        worked_ahead(partial(_guard_and_embed, embedder), _batches(path), ahead=EMBED_AHEAD) as embedded,
    ):
        for batch, ready in embedded:
            # Failures are reported in the order a one-batch-at-a-time import meets them.
            for where, error in (*batch.unreadable, *ready.refused):
                report.fail(where, error)
            if ready.accepted:
                _write_batch(app, caller, ready, scope, project_hint, report)
            if batch.records:
                advance(len(batch.records))
    return report


@dataclass
class _Batch:
    """Up to ``BATCH`` readable records, after the unreadable ones met since the batch before."""

    records: list[tuple[str, ImportRecord, str]]
    unreadable: list[tuple[str, str]]


@dataclass
class _Embedded:
    """A batch past the guard: each accepted record with its source and its vector, and the refused ones."""

    accepted: list[tuple[ImportRecord, str, dict[str, Any]]]
    vectors: np.ndarray
    refused: list[tuple[str, str]]


def _batches(path: Path) -> Iterator[_Batch]:
    records: list[tuple[str, ImportRecord, str]] = []
    unreadable: list[tuple[str, str]] = []
    for where, record, directory in read_records(path):
        if isinstance(record, str):
            unreadable.append((where, record))
            if len(unreadable) >= BATCH:
                # Bounded however many unreadable lines a file holds; the batch being filled stays one batch.
                yield _Batch([], unreadable)
                unreadable = []
            continue
        records.append((where, record, directory))
        if len(records) >= BATCH:
            yield _Batch(records, unreadable)
            records, unreadable = [], []
    if records or unreadable:
        yield _Batch(records, unreadable)


def _guard_and_embed(embedder: Embedder, batch: _Batch) -> _Embedded:
    """The content guard and the model's pass for a batch: what needs no transaction, worked ahead of the writes."""
    accepted: list[tuple[ImportRecord, str, dict[str, Any]]] = []
    refused: list[tuple[str, str]] = []
    for where, record, directory in batch.records:
        source = {k: str(v) for k, v in record.source.items() if isinstance(v, str | int | float)}
        source["imported_from"] = directory
        try:
            check_text("content", record.content)
            check_fields({"content": record.content, **{f"source.{k}": v for k, v in source.items()}})
        except errors.ZMError as error:
            refused.append((where, str(error)))
            continue
        accepted.append((record, where, source))
    vectors = embedder.embed([record.content for record, _, _ in accepted]) if accepted else np.zeros((0, 0))
    return _Embedded(accepted, vectors, refused)


def count_records(path: Path) -> int:
    """About how many records ``read_records`` yields (a line per JSONL record, a Markdown file each),
    counted without parsing them."""
    files = sorted(path.rglob("*.jsonl")) if path.is_dir() else [] if path.suffix == ".md" else [path]
    markdown = len(list(path.rglob("*.md"))) if path.is_dir() else int(path.suffix == ".md")
    lines = 0
    for file in files:
        with file.open("rb") as handle:
            lines += sum(1 for line in handle if line.strip())
    return markdown + lines


def _write_batch(
    app: App,
    caller: Caller,
    batch: _Embedded,
    scope: str | None,
    project_hint: str | None,
    report: ImportReport,
) -> None:
    now = app.clock()
    with app.store.tx(write=True) as tx:
        # remember's lock: a remember or another import by the same owner waits, then sees these rows.
        tx.serialize(f"remember:{caller.uid}")
        vis = visibility(tx, caller.uid)
        default_target: str | None = None
        if scope is not None or project_hint is not None:
            hinted = (
                resolve_hint(tx, vis, project_hint, auto_create=app.settings.auto_create_projects).scope
                if project_hint is not None
                else None
            )
            vis = visibility(tx, caller.uid)
            default_target = write_target(tx, vis, scope, hinted, SessionState(None, None))
        placed: list[tuple[ImportRecord, dict[str, Any], np.ndarray, str]] = []
        for (record, where, source), vector in zip(batch.accepted, batch.vectors, strict=True):
            try:
                target = shorthand(vis, tx, record.scope) if record.scope else default_target
                if target is None:
                    raise errors.validation(
                        "pass --scope or --project, or give each record a scope", subcode=errors.SCOPE_TARGET_REQUIRED
                    )
                if not vis.can_write(target):
                    raise errors.validation(f"scope: {target} is read-only for you")
            except errors.ZMError as error:
                report.fail(where, str(error))
                continue
            placed.append((record, source, vector, target))
        # An owner's text already stored, or met earlier in this batch, is skipped.
        seen = tx.stored_hashes(caller.uid, {content_hash(record.content) for record, _, _, _ in placed})
        new: list[tuple[Memory, np.ndarray]] = []
        skipped = 0
        for record, source, vector, target in placed:
            digest = content_hash(record.content)
            if digest in seen:
                skipped += 1
                continue
            seen.add(digest)
            memory = Memory(
                id=memory_id(),
                owner=caller.uid,
                scope=target,
                kind=record.kind,
                content=record.content,
                content_hash=digest,
                author_kind=AuthorKind.HUMAN,
                agent_name="import",
                rank=Rank.AGENT,
                source=source,
                created_at=now,
                updated_at=now,
            )
            new.append((memory, vector))
        tx.insert_memories(new, app.embedder.model_id)
        tx.add_memory_audits(
            actor=caller.uid,
            action="import",
            owner=caller.uid,
            payloads=[
                (m.id, {"scope": m.scope, "kind": m.kind.value, "imported_from": m.source["imported_from"]})
                for m, _ in new
            ],
            run_id=None,
            at=now,
        )
    # Counted once the batch is committed: a batch that fails is written not at all and reported not at all.
    report.imported += len(new)
    report.skipped += skipped
