"""The caller of a service function: who, through what client, in which session, from which workspace."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Caller:
    uid: str
    client: str = "cli"
    session_id: str | None = None
    author_kind: str = "agent"
    # The directory the session works in, as the transport knows it (a stdio server's repository): the
    # session's project when no call names another. None where the transport does not say.
    workspace: str | None = None
