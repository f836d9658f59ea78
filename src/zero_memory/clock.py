"""Time, in one place, so tests can move it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]


def utcnow() -> datetime:
    return datetime.now(UTC)


def to_text(moment: datetime) -> str:
    """Fixed-width ISO-8601 UTC text: sorts as time does, in both stores."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def from_text(text: str) -> datetime:
    return datetime.fromisoformat(text)
