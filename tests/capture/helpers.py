"""Builders the capture tests share (and the dashboard tests, to seed captured memories)."""

from __future__ import annotations

from zero_memory.app import App
from zero_memory.judge.fake import FakeJudge
from zero_memory.judge.ledger import AttributedJudge
from zero_memory.judge.owners import ledger_recorder


def statement(content: str, kind: str = "fact", scope_hint: str = "project") -> dict[str, str]:
    """One statement of an extraction answer."""
    return {"content": content, "kind": kind, "scope_hint": scope_hint}


def with_model(app: App, model: FakeJudge) -> None:
    """Every owner's extraction goes to ``model`` and lands in the usage ledger, as with a real provider."""
    record = ledger_recorder(app.store, app.clock)
    app.judge_factory = lambda owner, run_id: AttributedJudge(model, owner=owner, run_id=run_id, record=record)
