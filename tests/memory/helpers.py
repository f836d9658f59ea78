"""Small builders that keep the memory tests readable."""

from __future__ import annotations

from typing import Any

from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.memory.models import RememberRequest, RememberResult
from zero_memory.memory.write import remember


def write(app: App, caller: Caller, content: str, kind: str = "fact", **fields: Any) -> RememberResult:
    fields.setdefault("scope", None if "project_hint" in fields else "personal")
    return remember(app, caller, RememberRequest(content=content, kind=kind, **fields))  # type: ignore[arg-type]


def supersede(dst: str) -> dict[str, str]:
    return {"type": "supersedes", "dst": dst}
