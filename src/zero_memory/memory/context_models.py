"""The shapes of a briefing, of the open-loop list and of a pin: what ``build_context``, ``zm context``,
``zm loops`` and ``zm pin`` return (the MCP output schema, the CLI's ``--json``)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from zero_memory.domain.memory import Kind
from zero_memory.memory.models import AuditView, SessionInfo


def _unset(value: object) -> bool:
    return value is None or value is False


class BriefingItem(BaseModel):
    """One memory in a briefing. A flag at its default (``truncated``, ``pinned`` false, no ``open_days``) is left
    out of the JSON: the budget holds for the JSON a client hands the model, and every absent key costs nothing."""

    id: str
    kind: Kind
    scope: str
    age_days: float
    content: str = Field(description="The memory's text, cut at the briefing's per-item limit (see truncated).")
    truncated: bool = Field(
        default=False, exclude_if=_unset, description="The content was cut: get_memory has it whole."
    )
    pinned: bool = Field(default=False, exclude_if=_unset)
    open_days: float | None = Field(
        default=None, exclude_if=_unset, description="Open loops: how long the loop has been open."
    )


class BriefingSection(BaseModel):
    items: list[BriefingItem]
    omitted: int = Field(description="Items of this section left out to keep the briefing within its budget.")


class PendingReviews(BaseModel):
    count: int
    pointer: str | None = Field(default=None, exclude_if=_unset)


class Briefing(BaseModel):
    project: str | None = Field(description="The project this briefing is about (the hint's, else the session's).")
    topic: str | None
    rules: BriefingSection
    open_loops: BriefingSection
    memories: BriefingSection
    code_changed: BriefingSection = Field(
        default_factory=lambda: BriefingSection(items=[], omitted=0),
        description="Memories whose code changed or went since they were verified: re-check before relying on them.",
    )
    pending_reviews: PendingReviews
    budget_chars: int = Field(
        description="The briefing's budget, in characters of its JSON (what a client hands the model) and of its text."
    )
    session: SessionInfo


class LoopView(BaseModel):
    id: str
    kind: Kind
    scope: str
    content: str
    status: str
    age_days: float
    open_days: float | None = Field(default=None, description="How long it has been open; None once closed.")
    closed_at: str | None = None
    closed_by: str | None = None
    note: str | None = None
    run_id: str | None = Field(default=None, description="The hygiene run that closed it, when one did.")
    audit: list[AuditView] = Field(default_factory=list)


class LoopList(BaseModel):
    loops: list[LoopView]
    status: str
    more: bool


class PinResult(BaseModel):
    id: str
    pinned: bool
    changed: bool
