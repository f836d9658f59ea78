"""Pure decisions of the capture stream, table-tested: where a statement goes, what a failure leads to."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from zero_memory.domain.memory import Kind
from zero_memory.domain.records import ChunkStatus
from zero_memory.domain.verdicts import ExtractedStatement, ScopeHint
from zero_memory.settings import CaptureConfig

PERSONAL = "personal"


def target(statement: ExtractedStatement, project_scope: str) -> str:
    """The scope a statement is written to: the session's project, or the user's personal scope.

    Only a preference the model says is about the person goes to ``personal``:
    the portability gate grants that without a judge. Everything else stays in
    the project, where a capture cannot mislead another project; a world fact
    reaches core later through the portability audit, reviewed.
    """
    if statement.scope_hint is ScopeHint.PERSONAL and statement.kind is Kind.PREFERENCE:
        return PERSONAL
    return project_scope


@dataclass(frozen=True, slots=True)
class AfterFailure:
    """What a failed extraction attempt leads to: try again at ``next_attempt_at``, or give up."""

    status: ChunkStatus
    next_attempt_at: datetime


def after_failure(attempts: int, config: CaptureConfig, now: datetime) -> AfterFailure:
    """``attempts`` counts the one that just failed. Waits double each time: 1, 2, 4, 8 … retry periods."""
    if attempts >= config.max_attempts:
        return AfterFailure(ChunkStatus.FAILED, now)
    delay = config.retry_after_s * 2 ** max(attempts - 1, 0)
    return AfterFailure(ChunkStatus.PENDING, now + timedelta(seconds=delay))


def next_day(now: datetime) -> datetime:
    """The next UTC midnight: when a spent daily allowance is whole again."""
    start = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return start + timedelta(days=1)
