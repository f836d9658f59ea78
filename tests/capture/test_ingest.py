"""Accepting chunks, on SQLite and PostgreSQL: staged once, guarded whole, extracted in the background."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.capture.conftest import Capture
from tests.capture.helpers import statement
from zero_memory import errors
from zero_memory.access.caller import Caller
from zero_memory.capture.chunks import chunk_hash, split
from zero_memory.capture.ingest import ingest_text
from zero_memory.domain.memory import Rank
from zero_memory.domain.records import ChunkStatus
from zero_memory.judge.base import FailureKind
from zero_memory.judge.none_provider import NoneJudge
from zero_memory.judge.questions.extraction import ExtractionRequest
from zero_memory.settings import CaptureConfig
from zero_memory.store import system_tx

CHUNK = "user: how do we deploy the api?\n\nassistant: run make ship from the repository root.\n"
TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def test_a_chunk_becomes_provisional_memories_in_the_sessions_project(capture: Capture) -> None:
    capture.model.enqueue(
        [statement("The api service deploys with `make ship` from the repository root.", "convention")]
    )
    result = capture.send(CHUNK)
    assert result.status == "accepted" and result.extraction is ChunkStatus.PENDING
    assert result.scope.startswith("proj.alice.")
    assert result.chunk_hash == chunk_hash(CHUNK)

    [memory] = capture.memories()
    assert memory.scope == result.scope
    assert memory.rank is Rank.PROVISIONAL
    assert (memory.author_kind.value, memory.agent_name) == ("system", "extraction")
    assert memory.source["conversation_id"] == "conv-1"
    assert memory.source["chunk_hash"] == result.chunk_hash
    assert memory.source["client"] == "claude-code"

    [request] = capture.model.requests
    assert isinstance(request, ExtractionRequest) and request.transcript == CHUNK
    done = capture.chunk(result.chunk_id)
    assert done.status is ChunkStatus.DONE and (done.statements, done.created) == (1, 1)
    assert done.transcript is None, "the text is dropped once extraction is done"


def test_the_same_chunk_again_changes_nothing(capture: Capture) -> None:
    capture.model.enqueue([statement("The api listens on port 8080.")])
    first = capture.send(CHUNK)
    before = capture.memories()
    again = capture.send(CHUNK, conversation="another-conversation")
    assert again.status == "duplicate" and again.chunk_id == first.chunk_id
    assert again.extraction is ChunkStatus.DONE
    assert capture.memories() == before
    assert len(capture.model.requests) == 1


def test_a_chunk_holding_a_credential_is_refused_whole_and_never_stored_or_sent(capture: Capture) -> None:
    with pytest.raises(errors.ZMError) as refused:
        capture.send(f"user: the deploy token is {TOKEN}\n\nassistant: noted\n")
    assert str(refused.value).startswith("validation_failed: secret_content_rejected: transcript_chunk github_token")
    assert TOKEN not in str(refused.value) and TOKEN[:10] not in str(refused.value)
    assert capture.model.requests == []
    with system_tx(capture.app.store, "test") as tx:
        assert tx.list_chunks(owner="alice") == []
        assert tx.audit_actions("capture.ingest") == []


def test_a_chunk_may_be_longer_than_a_memory_but_not_longer_than_the_chunk_limit(capture: Capture) -> None:
    long = "user: " + "the api deploys with make ship. " * 1_000  # 32,006 characters, twice a memory's limit
    capture.model.enqueue([])
    assert capture.send(long).status == "accepted"
    with pytest.raises(errors.ZMError, match=r"^validation_failed: transcript_chunk: 48001 characters"):
        capture.send("x" * 48_001)


def test_a_wrong_chunk_hash_is_refused(capture: Capture) -> None:
    with pytest.raises(errors.ZMError, match=r"^validation_failed: chunk_hash: is not the SHA-256"):
        capture.send(CHUNK, chunk_hash=chunk_hash(CHUNK + " "))
    capture.model.enqueue([])
    assert capture.send(CHUNK, chunk_hash=chunk_hash(CHUNK)).status == "accepted"


def test_a_chunk_with_no_project_is_refused(capture: Capture) -> None:
    with pytest.raises(errors.ZMError, match=r"^validation_failed: scope_target_required:"):
        capture.send(CHUNK, project_hint=None)
    assert capture.model.requests == []


def test_a_later_chunk_of_the_conversation_goes_to_the_project_its_session_attached_to(capture: Capture) -> None:
    capture.model.enqueue([], [statement("The api's staging host is staging-api.internal.")])
    first = capture.send(CHUNK)
    later = capture.send("user: and the staging host?\n\nassistant: staging-api.internal\n", project_hint=None)
    assert later.scope == first.scope
    assert [m.scope for m in capture.memories()] == [first.scope]


def test_without_an_extraction_model_nothing_is_staged(capture: Capture) -> None:
    capture.app.judge_factory = lambda owner, run_id: NoneJudge()
    with pytest.raises(errors.ZMError, match=r"^unavailable: no extraction model is configured"):
        capture.send(CHUNK)
    with system_tx(capture.app.store, "test") as tx:
        assert tx.list_chunks(owner="alice") == []


def test_the_staging_table_holds_a_bounded_backlog(make_capture: Callable[..., Capture]) -> None:
    capture = make_capture()
    capture.app.settings = capture.app.settings.with_changes(capture=CaptureConfig(max_pending_chunks=2))
    for n in range(2):
        capture.model.enqueue(FailureKind.MALFORMED)  # each waits for a retry
        capture.send(f"user: question {n}\n")
    with pytest.raises(errors.ZMError, match=r"^unavailable: 2 chunks are already waiting"):
        capture.send("user: a third question\n")


def test_one_owner_cannot_see_or_collide_with_another_owners_chunk(capture: Capture) -> None:
    capture.model.enqueue([statement("Alice's api deploys with make ship.")], [statement("Bob's api deploys too.")])
    mine = capture.send(CHUNK)
    theirs = capture.send(CHUNK, who=Caller("bob", client="codex"))
    assert theirs.status == "accepted" and theirs.chunk_id != mine.chunk_id
    assert [m.owner for m in capture.memories("bob")] == ["bob"]


def test_a_long_conversation_is_guarded_whole_then_staged_in_chunks(capture: Capture) -> None:
    capture.app.settings = capture.app.settings.with_changes(capture=CaptureConfig(max_chunk_chars=200))
    text = "".join(f"user: question number {n} about the api\n\nassistant: answer {n}\n\n" for n in range(12))
    with pytest.raises(errors.ZMError, match="secret_content_rejected"):
        ingest_text(capture.app, capture.alice, text + TOKEN, conversation_id="c", client=None, project_hint="api")
    assert capture.model.requests == []
    capture.model.enqueue(*([[]] * 20))
    results = ingest_text(capture.app, capture.alice, text, conversation_id="c", client=None, project_hint="api")
    capture.app.wait_idle()
    assert len(results) > 1 and all(r.chars <= 200 for r in results)
    assert [r.status for r in results] == ["accepted"] * len(results)
    # Extraction runs on the app's background threads: the pieces reach the model in any order, each once.
    sent = sorted(r.transcript for r in capture.model.requests if isinstance(r, ExtractionRequest))
    assert sent == sorted(split(text, 200)) and "".join(split(text, 200)) == text
