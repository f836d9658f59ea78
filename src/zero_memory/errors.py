"""The error codes of zero-memory.

Every refusal is a ``ZMError`` whose text starts with a stable code and, for
some, a second stable prefix: ``validation_failed: secret_content_rejected: ...``.
The codes are API; the human wording after them may change. Each edge (MCP,
CLI, HTTP) translates a ``ZMError`` once: a tool error, a one-line message
with a non-zero exit, an error page.
"""

from __future__ import annotations

from enum import StrEnum


class Code(StrEnum):
    VALIDATION_FAILED = "validation_failed"
    NOT_FOUND = "not_found"
    CONFLICT = "conflict"
    UNAVAILABLE = "unavailable"
    INTERNAL = "internal"


class ZMError(Exception):
    """A refusal with a stable code, an optional second code, and a human detail."""

    def __init__(self, code: Code, detail: str, *, subcode: str | None = None) -> None:
        self.code = code
        self.subcode = subcode
        self.detail = detail
        super().__init__(str(self))

    def __str__(self) -> str:
        prefix = f"{self.code}: {self.subcode}:" if self.subcode else f"{self.code}:"
        return f"{prefix} {self.detail}" if self.detail else prefix


def validation(detail: str, *, subcode: str | None = None) -> ZMError:
    return ZMError(Code.VALIDATION_FAILED, detail, subcode=subcode)


def not_found(what: str) -> ZMError:
    return ZMError(Code.NOT_FOUND, f"no {what}")


def conflict(detail: str, *, subcode: str | None = None) -> ZMError:
    return ZMError(Code.CONFLICT, detail, subcode=subcode)


def unavailable(detail: str, *, subcode: str | None = None) -> ZMError:
    return ZMError(Code.UNAVAILABLE, detail, subcode=subcode)


def internal(detail: str) -> ZMError:
    return ZMError(Code.INTERNAL, detail)


SCOPE_TARGET_REQUIRED = "scope_target_required"
PROJECT_HINT_UNRESOLVABLE = "project_hint_unresolvable"
SECRET_CONTENT_REJECTED = "secret_content_rejected"
ALREADY_RESOLVED = "already_resolved"
BUDGET_EXHAUSTED = "budget_exhausted"
