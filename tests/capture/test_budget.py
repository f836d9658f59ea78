"""Each owner's daily extraction allowance, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from tests.capture.conftest import Capture
from tests.capture.helpers import statement
from zero_memory import errors
from zero_memory.access.caller import Caller
from zero_memory.capture import budget
from zero_memory.memory.lifecycle import get_memory
from zero_memory.memory.models import RememberRequest
from zero_memory.memory.recall import recall
from zero_memory.memory.write import remember
from zero_memory.store import system_tx

CHUNK = "user: how do we deploy the api?\n\nassistant: run make ship from the repository root.\n"


def test_an_owner_over_budget_is_refused_ingestion_and_everything_else_works(capture: Capture) -> None:
    budget.set_budget(capture.app.store, "alice", 120, at=capture.clock())
    capture.model.enqueue([statement("The api deploys with make ship.", "convention")])
    capture.send(CHUNK)  # 100 in + 20 out: the allowance is spent
    status = budget.status(capture.app, "alice", capture.clock())
    assert (status.spent_today, status.remaining, status.source) == (120, 0, "user")

    with pytest.raises(errors.ZMError) as refused:
        capture.send("user: one more thing\n")
    assert str(refused.value).startswith("unavailable: budget_exhausted: today's extraction allowance of 120 tokens")
    assert len(capture.model.requests) == 1

    # The same chunk again is still recognised, and reads and writes carry on.
    assert capture.send(CHUNK).status == "duplicate"
    [memory] = capture.memories()
    hits = recall(capture.app, capture.alice, "how does the api deploy", scopes_arg=["*"])
    assert memory.id in [h.id for h in hits.hits]
    assert get_memory(capture.app, capture.alice, memory.id).memory.id == memory.id
    written = remember(
        capture.app, capture.alice, RememberRequest(content="The api's port is 8080.", kind="fact", scope="personal")
    )
    assert written.status == "created"
    # Another owner's allowance is their own.
    capture.model.enqueue([])
    assert capture.send(CHUNK, who=Caller("bob", client="codex")).status == "accepted"


def test_the_allowance_renews_the_next_utc_day(capture: Capture) -> None:
    budget.set_budget(capture.app.store, "alice", 100, at=capture.clock())
    capture.model.enqueue([])
    capture.send(CHUNK)
    with pytest.raises(errors.ZMError, match="budget_exhausted"):
        capture.send("user: more\n")
    capture.clock.advance(days=1)
    capture.model.enqueue([])
    assert capture.send("user: more\n").status == "accepted"


def test_an_allowance_of_zero_turns_an_owners_capture_off_and_clearing_it_restores_the_servers(
    capture: Capture,
) -> None:
    budget.set_budget(capture.app.store, "alice", 0, at=capture.clock())
    with pytest.raises(errors.ZMError, match="budget_exhausted"):
        capture.send(CHUNK)
    assert capture.model.requests == []
    assert budget.clear_budget(capture.app.store, "alice", at=capture.clock())
    assert not budget.clear_budget(capture.app.store, "alice", at=capture.clock())
    status = budget.status(capture.app, "alice", capture.clock())
    assert (status.source, status.daily_tokens) == ("server", capture.app.settings.capture.daily_tokens)
    capture.model.enqueue([])
    assert capture.send(CHUNK).status == "accepted"
    with system_tx(capture.app.store, "test") as tx:
        actions = [e.action for e in tx.audit_actions("capture.budget_set")] + [
            e.action for e in tx.audit_actions("capture.budget_clear")
        ]
    assert actions == ["capture.budget_set", "capture.budget_clear"]


def test_a_budget_for_a_missing_user_is_refused(capture: Capture) -> None:
    with pytest.raises(errors.ZMError, match="not_found"):
        budget.set_budget(capture.app.store, "nobody", 10, at=capture.clock())
