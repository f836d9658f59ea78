"""The caller of a service function: who, through what client, in which session."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Caller:
    uid: str
    client: str = "cli"
    session_id: str | None = None
    author_kind: str = "agent"
