"""A real app (SQLite file or PostgreSQL) whose extraction model is a ``FakeJudge`` recorded in the ledger."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.capture.helpers import with_model
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.capture.ingest import ingest
from zero_memory.capture.models import IngestRequest, IngestResult
from zero_memory.domain.memory import Memory
from zero_memory.domain.records import CaptureChunk
from zero_memory.judge.fake import FakeJudge
from zero_memory.store import SYSTEM, system_tx

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@dataclass
class Clock:
    """A clock the test moves."""

    now: datetime = START

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@dataclass
class Capture:
    """An app with a fake extraction model, and the few things every capture test does."""

    app: App
    model: FakeJudge
    clock: Clock
    project: str
    alice: Caller = field(default_factory=lambda: Caller("alice", client="claude-code"))

    def send(
        self, text: str, *, conversation: str = "conv-1", who: Caller | None = None, **fields: Any
    ) -> IngestResult:
        fields.setdefault("project_hint", self.project)
        request = IngestRequest(transcript_chunk=text, conversation_id=conversation, **fields)
        result = ingest(self.app, who or self.alice, request)
        self.app.wait_idle()
        return result

    def chunk(self, chunk_id: str) -> CaptureChunk:
        with system_tx(self.app.store, "test") as tx:
            found = tx.get_chunk(chunk_id)
        assert found is not None
        return found

    def memories(self, owner: str = "alice") -> list[Memory]:
        with system_tx(self.app.store, "test") as tx:
            return tx.live_memories(owner=owner)

    def memory(self, memory_id: str) -> Memory:
        with system_tx(self.app.store, "test") as tx:
            found = tx.get_memory(memory_id, SYSTEM)
        assert found is not None
        return found


@pytest.fixture
def make_capture(make_app: Callable[..., App], tmp_path: Path) -> Callable[..., Capture]:
    def make(environ: dict[str, str] | None = None, *, backend: str = "sqlite") -> Capture:
        clock = Clock()
        app = make_app(environ, backend=backend, clock=clock)
        model = FakeJudge()
        with_model(app, model)
        return Capture(app, model, clock, project=str(tmp_path / "src" / "api"))

    return make


@pytest.fixture(params=["sqlite", "postgres"])
def capture(request: pytest.FixtureRequest, make_capture: Callable[..., Capture]) -> Capture:
    """The capture stream on each store."""
    return make_capture(backend=request.param)


@pytest.fixture
def sqlite_capture(make_capture: Callable[..., Capture]) -> Capture:
    return make_capture()
