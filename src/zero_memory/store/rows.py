"""Turning stored rows into domain types, and the helpers every query shares."""

from __future__ import annotations

import json
from datetime import datetime
from enum import Enum
from typing import Any, TypeVar

from zero_memory.clock import from_text
from zero_memory.domain.memory import AuthorKind, Brief, InvalidationReason, Kind, Memory, Rank, Status
from zero_memory.domain.records import (
    AuditEntry,
    Dispute,
    DisputeShape,
    DisputeStatus,
    Link,
    PortabilityCandidate,
    Project,
    Run,
    RunStatus,
    User,
)
from zero_memory.ids import new_id

AUDIT_STRING_CAP = 500
AUDIT_ROW_CAP = 8_192

MEMORY_COLUMNS = (
    "id, owner, scope, kind, content, content_hash, author_kind, agent_name, rank, source, "
    "created_at, updated_at, status, superseded_by, invalidated_reason, original_scope, session_key, "
    "restored_at"
)

BRIEF_COLUMNS = "id, scope, kind, content, author_kind, agent_name, rank, created_at, status"


def marks(n: int) -> str:
    return ", ".join("?" * n)


def cap_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """Audit payload strings are capped at 500 characters each and 8 KB a row."""

    def cap(value: Any) -> Any:
        if isinstance(value, str):
            return value if len(value) <= AUDIT_STRING_CAP else value[: AUDIT_STRING_CAP - 1] + "…"
        if isinstance(value, dict):
            return {str(k): cap(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [cap(v) for v in value]
        return value

    capped = cap(payload)
    if len(json.dumps(capped)) > AUDIT_ROW_CAP:
        capped = {k: v for k, v in capped.items() if not isinstance(v, list | dict)}
        capped["truncated"] = True
    return capped


# Members by stored value: a recall reads a hundred rows, and calling an enum class costs 25 times a dict
# look-up. A value not in the map goes through the class, which refuses it as before.
_KINDS = {member.value: member for member in Kind}
_AUTHOR_KINDS = {member.value: member for member in AuthorKind}
_RANKS = {member.value: member for member in Rank}
_STATUSES = {member.value: member for member in Status}

M = TypeVar("M", bound=Enum)


def _member(members: dict[Any, M], cls: type[M], value: Any) -> M:
    return members[value] if value in members else cls(value)


def memory_from_row(row: dict[str, Any]) -> Memory:
    return Memory(
        id=row["id"],
        owner=row["owner"],
        scope=row["scope"],
        kind=_member(_KINDS, Kind, row["kind"]),
        content=row["content"],
        content_hash=row["content_hash"],
        author_kind=_member(_AUTHOR_KINDS, AuthorKind, row["author_kind"]),
        agent_name=row["agent_name"],
        rank=_member(_RANKS, Rank, row["rank"]),
        source=json.loads(row["source"]),
        created_at=from_text(row["created_at"]),
        updated_at=from_text(row["updated_at"]),
        status=_member(_STATUSES, Status, row["status"]),
        superseded_by=row["superseded_by"],
        invalidated_reason=InvalidationReason(row["invalidated_reason"]) if row["invalidated_reason"] else None,
        original_scope=row["original_scope"],
        restored_at=_dt(row["restored_at"]),
    )


def brief_from_row(row: dict[str, Any]) -> Brief:
    return Brief(
        row["id"],
        row["scope"],
        _member(_KINDS, Kind, row["kind"]),
        row["content"],
        _member(_AUTHOR_KINDS, AuthorKind, row["author_kind"]),
        row["agent_name"],
        _member(_RANKS, Rank, row["rank"]),
        from_text(row["created_at"]),
        _member(_STATUSES, Status, row["status"]),
    )


def _dt(value: str | None) -> datetime | None:
    return from_text(value) if value else None


def dispute_from_row(row: dict[str, Any]) -> Dispute:
    return Dispute(
        id=row["id"],
        owner=row["owner"],
        shape=DisputeShape(row["shape"]),
        verdict=row["verdict"],
        origin=row["origin"],
        status=DisputeStatus(row["status"]),
        memory_a=row["memory_a"],
        memory_b=row["memory_b"],
        direction=row["direction"],
        confidence=row["confidence"],
        rationale=row["rationale"],
        model=row["model"],
        pair_key=row["pair_key"],
        reason=row["reason"],
        run_id=row["run_id"],
        created_at=from_text(row["created_at"]),
        resolved_at=_dt(row["resolved_at"]),
        resolved_by=row["resolved_by"],
        resolution=json.loads(row["resolution"]) if row["resolution"] else {},
        proposal=json.loads(row["proposal"]) if row.get("proposal") else None,
    )


def link_from_row(row: dict[str, Any]) -> Link:
    return Link(
        id=row["id"],
        src=row["src"],
        dst=row["dst"],
        type=row["type"],
        created_at=from_text(row["created_at"]),
        created_by=row["created_by"],
        run_id=row["run_id"],
        removed_at=_dt(row["removed_at"]),
    )


def audit_from_row(row: dict[str, Any]) -> AuditEntry:
    return AuditEntry(
        seq=row["seq"],
        at=from_text(row["at"]),
        actor=row["actor"],
        action=row["action"],
        owner=row["owner"],
        memory_ids=json.loads(row["memory_ids"]),
        payload=json.loads(row["payload"]),
        run_id=row["run_id"],
    )


def run_from_row(row: dict[str, Any]) -> Run:
    return Run(
        id=row["id"],
        owner=row["owner"],
        kind=row["kind"],
        status=RunStatus(row["status"]),
        dry_run=bool(row["dry_run"]),
        started_by=row["started_by"],
        started_at=from_text(row["started_at"]),
        finished_at=_dt(row["finished_at"]),
        summary=json.loads(row["summary"]),
    )


def project_from_row(row: dict[str, Any]) -> Project:
    return Project(
        scope=row["scope"],
        owner=row["owner"],
        kind=row["kind"],
        slug=row["slug"],
        path=row["path"],
        remote=row["remote"],
        created_at=from_text(row["created_at"]),
    )


def portability_from_row(row: dict[str, Any]) -> PortabilityCandidate:
    return PortabilityCandidate(
        id=row["id"],
        memory_id=row["memory_id"],
        owner=row["owner"],
        status=row["status"],
        original_scope=row["original_scope"],
        created_at=from_text(row["created_at"]),
        confidence=row["confidence"],
        rationale=row["rationale"],
        model=row["model"],
        run_id=row["run_id"],
        resolved_at=_dt(row["resolved_at"]),
        resolved_by=row["resolved_by"],
    )


def user_from_row(row: dict[str, Any]) -> User:
    return User(row["id"], row["display_name"], from_text(row["created_at"]), bool(row["is_local"]))


def new_link_id() -> str:
    return new_id("lnk")
