"""Extraction, on SQLite and PostgreSQL: every statement through the write path, failures retried, then given up."""

from __future__ import annotations

import pytest

from tests.capture.conftest import Capture
from tests.capture.helpers import statement
from zero_memory.capture.extract import drain
from zero_memory.domain.memory import Rank
from zero_memory.domain.records import ChunkStatus
from zero_memory.hygiene.on_demand import scan_hygiene
from zero_memory.judge.base import FailureKind
from zero_memory.judge.questions.extraction import ExtractionRequest
from zero_memory.judge.questions.pair import PairRequest
from zero_memory.memory.models import RememberRequest
from zero_memory.memory.write import remember
from zero_memory.settings import CaptureConfig
from zero_memory.store import system_tx

CHUNK = "user: how do we deploy the api?\n\nassistant: run make ship from the repository root.\n"
SHIP = "The api service deploys with `make ship` from the repository root."


def stated(capture: Capture, content: str, kind: str = "convention") -> str:
    """A memory an agent stated (rank 1) in the project."""
    request = RememberRequest(content=content, kind=kind, project_hint=capture.project)  # type: ignore[arg-type]
    return remember(capture.app, capture.alice, request).id


def test_a_broken_answer_stores_nothing_and_the_chunk_is_retried(capture: Capture) -> None:
    capture.model.enqueue(FailureKind.MALFORMED)
    sent = capture.send(CHUNK)
    waiting = capture.chunk(sent.chunk_id)
    assert capture.memories() == []
    assert waiting.status is ChunkStatus.PENDING and waiting.attempts == 1
    assert waiting.last_error is not None and waiting.last_error.startswith("malformed:")
    assert waiting.transcript == CHUNK, "the text is kept while extraction still needs it"

    assert drain(capture.app) == [], "not due before its retry time"
    capture.clock.advance(seconds=capture.app.settings.capture.retry_after_s)
    capture.model.enqueue([statement(SHIP, "convention")])
    [outcome] = drain(capture.app)
    assert outcome.status is ChunkStatus.DONE and len(outcome.created) == 1
    assert [m.content for m in capture.memories()] == [SHIP]
    assert capture.chunk(sent.chunk_id).transcript is None


def test_a_chunk_is_given_up_after_its_attempts_and_sending_it_again_requeues_it(capture: Capture) -> None:
    attempts = capture.app.settings.capture.max_attempts
    capture.model.enqueue(*[FailureKind.TIMEOUT] * attempts)
    sent = capture.send(CHUNK)
    for _ in range(attempts - 1):
        capture.clock.advance(days=1)
        drain(capture.app)
    gone = capture.chunk(sent.chunk_id)
    assert gone.status is ChunkStatus.FAILED and gone.attempts == attempts
    assert gone.transcript is None, "a chunk given up is not held"
    assert gone.last_error is not None and gone.last_error.startswith("timeout:")
    with system_tx(capture.app.store, "test") as tx:
        assert [e.payload["chunk"] for e in tx.audit_actions("capture.give_up")] == [sent.chunk_id]
    capture.clock.advance(days=1)
    assert drain(capture.app) == []

    capture.model.enqueue([statement(SHIP, "convention")])
    again = capture.send(CHUNK)
    assert again.status == "requeued" and again.chunk_id == sent.chunk_id
    assert capture.chunk(sent.chunk_id).status is ChunkStatus.DONE
    assert len(capture.memories()) == 1


def test_a_capture_restating_an_authoritative_memory_yields_to_it(capture: Capture) -> None:
    authority = stated(capture, SHIP)
    capture.model.enqueue([statement(SHIP, "convention")])
    sent = capture.send(CHUNK)
    assert [m.id for m in capture.memories()] == [authority]
    assert capture.chunk(sent.chunk_id).yielded == 1
    with system_tx(capture.app.store, "test") as tx:
        [extracted] = tx.audit_actions("capture.extract")
    assert extracted.memory_ids == [authority] and extracted.payload["yielded"] == 1


def test_an_exact_repeat_of_a_capture_is_absorbed(capture: Capture) -> None:
    capture.model.enqueue([statement(SHIP, "convention")], [statement(SHIP, "convention")])
    capture.send(CHUNK)
    later = capture.send("user: remind me how we ship?\n\nassistant: make ship, from the root.\n")
    assert len(capture.memories()) == 1
    assert capture.chunk(later.chunk_id).absorbed == 1


def test_a_statement_holding_a_credential_is_refused_and_the_rest_are_kept(capture: Capture) -> None:
    key = "AKIA" + "IOSFODNN7EXAMPLE"
    capture.model.enqueue([statement(f"The deploy user's key is {key}."), statement(SHIP, "convention")])
    sent = capture.send(CHUNK)
    assert [m.content for m in capture.memories()] == [SHIP]
    done = capture.chunk(sent.chunk_id)
    assert (done.statements, done.created, done.refused) == (2, 1, 1)
    with system_tx(capture.app.store, "test") as tx:
        [extracted] = tx.audit_actions("capture.extract")
    assert extracted.payload["refused"] == ["secret_content_rejected"]
    assert key not in str(extracted.payload)


def test_a_personal_preference_goes_to_the_person_and_the_rest_to_the_project(capture: Capture) -> None:
    capture.model.enqueue(
        [
            statement("Alice wants answers without preamble.", "preference", "personal"),
            statement("Staging deploys only happen from main.", "decision", "personal"),
        ]
    )
    sent = capture.send(CHUNK)
    scopes = {m.content: m.scope for m in capture.memories()}
    assert scopes == {
        "Alice wants answers without preamble.": "user.alice",
        "Staging deploys only happen from main.": sent.scope,
    }
    assert [r for r in capture.model.requests if not isinstance(r, ExtractionRequest)] == [], "no gate call"


def test_a_capture_contradicting_an_authoritative_memory_is_overridden_by_the_next_cycle(capture: Capture) -> None:
    authority = stated(capture, "Releases are tagged by the release bot.")
    capture.model.enqueue([statement("Tag releases by hand with git tag; there is no release bot.")])
    capture.send(CHUNK)
    [captured] = [m for m in capture.memories() if m.rank is Rank.PROVISIONAL]

    capture.model.enqueue(("contradiction", 0.93))
    run = scan_hygiene(capture.app, capture.alice, wait=True)
    assert run.status == "completed" and run.auto_resolved == 1 and run.queued == 0
    [pair] = [r for r in capture.model.requests if isinstance(r, PairRequest)]
    assert pair.provisional, "a pair with a capture goes to the fast model"
    overridden = capture.memory(captured.id)
    assert not overridden.live and overridden.superseded_by == authority
    assert capture.memory(authority).live
    with system_tx(capture.app.store, "test") as tx:
        assert tx.open_disputes_for([authority, captured.id]) == []


def test_over_budget_extraction_waits_for_tomorrow_without_an_attempt(capture: Capture) -> None:
    capture.app.settings = capture.app.settings.with_changes(capture=CaptureConfig(daily_tokens=150))
    capture.model.enqueue(FailureKind.HTTP_ERROR)  # costs 120 tokens; 30 left
    sent = capture.send(CHUNK)
    capture.clock.advance(minutes=5)
    # Spent meanwhile by another chunk's call: nothing left today.
    with system_tx(capture.app.store, "test", write=True) as tx:
        tx.add_ledger(
            owner="alice",
            model="fake-fast",
            purpose="extract",
            input_tokens=30,
            output_tokens=0,
            latency_ms=1,
            outcome="judged",
            run_id=None,
            at=capture.clock(),
        )
    [deferred] = drain(capture.app)
    waiting = capture.chunk(sent.chunk_id)
    assert deferred.status is ChunkStatus.PENDING and waiting.attempts == 1
    assert waiting.next_attempt_at.date() > capture.clock().date()
    assert len(capture.model.requests) == 1

    capture.clock.advance(days=1)
    capture.model.enqueue([statement(SHIP, "convention")])
    [done] = drain(capture.app)
    assert done.status is ChunkStatus.DONE


@pytest.mark.parametrize("kind", [FailureKind.REFUSAL, FailureKind.INVALID_VERDICT, FailureKind.UNAVAILABLE])
def test_every_failure_kind_extracts_nothing(sqlite_capture: Capture, kind: FailureKind) -> None:
    sqlite_capture.model.enqueue(kind)
    sent = sqlite_capture.send(CHUNK)
    assert sqlite_capture.memories() == []
    assert sqlite_capture.chunk(sent.chunk_id).last_error.startswith(f"{kind}:")  # type: ignore[union-attr]
