"""The write path of ``remember``, rule by rule, on a real SQLite file with the real model."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

from tests.memory.helpers import supersede, write
from zero_memory import errors
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.embedding import Embedder
from zero_memory.memory import write as write_path
from zero_memory.memory.lifecycle import forget, get_memory, restore_memory
from zero_memory.memory.recall import recall
from zero_memory.store import SYSTEM, system_tx

FAKE_AWS_KEY = "AKIA" + "IOSFODNN7" + "EXAMPLE"


def stored(app: App, memory_id: str):  # type: ignore[no-untyped-def]
    with system_tx(app.store, "test") as tx:
        return tx.get_memory(memory_id, SYSTEM)


def count(app: App) -> int:
    with system_tx(app.store, "test") as tx:
        return tx.count_memories()


def test_a_new_memory_is_created_with_rank_1_and_an_audit_row(app: App, alice: Caller) -> None:
    result = write(app, alice, "The payments service is written in Go")
    assert result.status == "created"
    assert result.rank == 1
    assert result.scope == "user.alice"
    memory = stored(app, result.id)
    assert memory.agent_name == "test-client"
    assert memory.author_kind.value == "agent"
    actions = [a.action for a in get_memory(app, alice, result.id).audit]
    assert actions == ["remember"]


def test_an_identical_rewrite_is_absorbed_into_the_existing_memory(app: App, alice: Caller) -> None:
    first = write(app, alice, "The payments service is written in Go")
    again = write(app, alice, "The payments service is written in Go")
    assert again.status == "absorbed"
    assert again.id == first.id
    assert count(app) == 1


def test_a_near_paraphrase_with_the_opposite_value_is_written_not_swallowed(app: App, alice: Caller) -> None:
    green = write(app, alice, "The staging database is green")
    blue = write(app, alice, "The staging database is blue")
    assert blue.status == "created"
    assert blue.id != green.id
    assert green.id in [s.id for s in blue.similar_existing]
    assert blue.hint
    assert stored(app, green.id).live


def test_a_nearly_identical_write_of_equal_rank_is_written_and_left_to_hygiene(app: App, alice: Caller) -> None:
    first = write(app, alice, "The API server listens on port 8080")
    second = write(app, alice, "The API server is listening on port 8080")
    assert second.status == "created"
    assert {first.id, second.id} == {m.id for m in _live(app)}


def test_a_provisional_write_yields_to_an_authoritative_paraphrase(app: App, alice: Caller) -> None:
    authoritative = write(app, alice, "Always run migrations before deploying the API")
    provisional = write(app, alice, "Run the migrations before you deploy the API", provisional=True)
    assert provisional.status == "yielded"
    assert provisional.id == authoritative.id
    assert count(app) == 1


def test_a_provisional_write_on_a_new_subject_is_stored_at_rank_0(app: App, alice: Caller) -> None:
    result = write(app, alice, "The flaky test is test_checkout_timeout", provisional=True)
    assert result.status == "created"
    assert result.rank == 0


def test_a_declared_supersede_retires_and_links_atomically_and_restore_undoes_it(app: App, alice: Caller) -> None:
    old = write(app, alice, "The release is planned for Friday")
    new = write(app, alice, "The release shipped on Friday", links=[supersede(old.id)])
    assert new.superseded == [old.id]
    assert new.similar_existing == []
    retired = stored(app, old.id)
    assert retired.status.value == "invalidated"
    assert retired.invalidated_reason.value == "superseded"
    assert retired.superseded_by == new.id
    view = get_memory(app, alice, new.id)
    assert [(lk.type, lk.src, lk.dst) for lk in view.links] == [("supersedes", new.id, old.id)]
    assert [h.id for h in view.history] == [old.id]

    restored = restore_memory(app, alice, old.id)
    assert restored.changed and restored.removed_links == [new.id]
    back = stored(app, old.id)
    assert back.live and back.superseded_by is None and back.invalidated_reason is None
    assert get_memory(app, alice, new.id).links == []
    assert old.id in [h.id for h in recall(app, alice, "When is the release planned", scopes_arg=["*"]).hits]


def test_a_declared_supersede_closes_the_open_loop_it_replaces(app: App, alice: Caller) -> None:
    task = write(app, alice, "Migrate the billing cron to the new scheduler", kind="task")
    done = write(app, alice, "The billing cron now runs on the new scheduler", links=[supersede(task.id)])
    assert done.superseded == [task.id]
    audit = get_memory(app, alice, task.id).audit  # newest first
    assert audit[0].action == "supersede"
    assert audit[0].payload["loop_closed"] is True


def test_missing_dead_and_self_targets_are_skipped_and_reported(app: App, alice: Caller) -> None:
    dead = write(app, alice, "The cache TTL is five minutes")
    write(app, alice, "The cache TTL is ten minutes", links=[supersede(dead.id)])
    result = write(
        app, alice, "The cache TTL is fifteen minutes", links=[supersede(dead.id), supersede("mem_doesnotexist")]
    )
    reasons = {(s.dst, s.reason) for s in result.skipped_links}
    assert reasons == {(dead.id, "not_live"), ("mem_doesnotexist", "missing")}
    assert result.superseded == []


def test_an_absorbed_write_declaring_its_own_twin_reports_self(app: App, alice: Caller) -> None:
    first = write(app, alice, "Our CI runs on GitHub Actions")
    again = write(app, alice, "Our CI runs on GitHub Actions", links=[supersede(first.id)])
    assert again.status == "absorbed"
    assert [(s.dst, s.reason) for s in again.skipped_links] == [(first.id, "self")]
    assert stored(app, first.id).live


def test_a_supersede_of_another_users_memory_is_skipped_as_missing(app: App, alice: Caller, bob: Caller) -> None:
    theirs = write(app, bob, "Bob prefers tabs over spaces", kind="preference")
    result = write(app, alice, "Tabs are banned", links=[supersede(theirs.id)])
    assert result.status == "created" and result.superseded == []
    assert [(s.dst, s.reason) for s in result.skipped_links] == [(theirs.id, "missing")]
    assert stored(app, theirs.id).live and stored(app, theirs.id).superseded_by is None


def test_more_than_ten_declared_supersedes_are_refused(app: App, alice: Caller) -> None:
    with pytest.raises(errors.ZMError, match=r"^validation_failed: links: 11 declared"):
        write(app, alice, "Eleven at once", links=[supersede(f"mem_{i}") for i in range(11)])


def test_a_provisional_write_cannot_declare_a_supersede(app: App, alice: Caller) -> None:
    old = write(app, alice, "The linter is flake8")
    with pytest.raises(errors.ZMError, match=r"^validation_failed: links: a provisional"):
        write(app, alice, "The linter is ruff", provisional=True, links=[supersede(old.id)])
    assert stored(app, old.id).live


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", r"^validation_failed: content: must not be empty"),
        ("   \n ", r"^validation_failed: content: must not be empty"),
        ("x" * 16_001, r"^validation_failed: content: 16001 characters is over the limit of 16000"),
        ("nul \x00 byte", r"^validation_failed: content: contains a NUL"),
        ("lone \ud800 surrogate", r"^validation_failed: content: is not valid Unicode"),
    ],
)
def test_malformed_content_is_refused_and_nothing_is_stored(
    app: App, alice: Caller, content: str, message: str
) -> None:
    with pytest.raises(errors.ZMError, match=message):
        write(app, alice, content)
    assert count(app) == 0


def test_unicode_edge_cases_that_are_valid_text_are_stored_verbatim(app: App, alice: Caller) -> None:
    text = "Deploy notes \u200f\u05e9\u05dc\u05d5\u05dd \U0001f680 caf\u00e9 \u2014 done"
    result = write(app, alice, text)
    assert stored(app, result.id).content == text


def test_content_exactly_at_the_limit_is_accepted(app: App, alice: Caller) -> None:
    result = write(app, alice, "y" * 16_000)
    assert result.status == "created"
    assert result.length_directive and "16000 characters" in result.length_directive


@pytest.mark.parametrize("field", ["content", "project_hint", "session_id", "source"])
def test_a_secret_in_any_field_is_rejected_and_never_echoed(app: App, alice: Caller, field: str) -> None:
    fields: dict[str, object] = {"scope": "personal"}
    content = "The staging key is stored in vault"
    if field == "content":
        content = f"use {FAKE_AWS_KEY} for staging"
    elif field == "source":
        fields["source"] = {"thread": f"thread {FAKE_AWS_KEY}"}
    else:
        fields[field] = f"x-{FAKE_AWS_KEY}"
    with pytest.raises(errors.ZMError) as refused:
        write(app, alice, content, **fields)
    text = str(refused.value)
    assert text.startswith("validation_failed: secret_content_rejected:")
    assert FAKE_AWS_KEY not in text and FAKE_AWS_KEY[4:] not in text
    assert count(app) == 0


class RecordingEmbedder:
    """Wraps the real model and records every text it is asked to embed."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.seen: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.seen.extend(texts)
        return self.inner.embed(texts)


@pytest.fixture
def spied(make_app: Callable[..., App], embedder: Embedder) -> tuple[App, RecordingEmbedder]:
    """An app whose model records every text it embeds."""
    spy = RecordingEmbedder(embedder)
    return make_app(embedder=spy), spy


def test_the_content_guard_runs_before_the_embedder(spied: tuple[App, RecordingEmbedder], alice: Caller) -> None:
    (app, spy), caller = spied, alice
    with pytest.raises(errors.ZMError, match="secret_content_rejected"):
        write(app, caller, f"the key is {FAKE_AWS_KEY}")
    assert spy.seen == []
    write(app, caller, "A harmless fact about Go")
    assert spy.seen == ["A harmless fact about Go"]


def test_a_repeated_text_is_absorbed_without_running_the_model(
    spied: tuple[App, RecordingEmbedder], alice: Caller
) -> None:
    (app, spy), caller = spied, alice
    first = write(app, caller, "The build cache lives in /var/cache/ci")
    assert spy.seen == ["The build cache lives in /var/cache/ci"]
    again = write(app, caller, "The build cache lives in /var/cache/ci")
    assert (again.status, again.id) == ("absorbed", first.id)
    assert spy.seen == ["The build cache lives in /var/cache/ci"]


def test_the_same_text_in_another_scope_or_provisional_is_embedded(
    spied: tuple[App, RecordingEmbedder], alice: Caller
) -> None:
    (app, spy), caller = spied, alice
    write(app, caller, "The build cache lives in /var/cache/ci")
    elsewhere = write(app, caller, "The build cache lives in /var/cache/ci", scope="core")
    assert elsewhere.status == "created"
    # A provisional write probes its neighbours' authority by vector before it looks for its twin.
    provisional = write(app, caller, "The build cache lives in /var/cache/ci", provisional=True)
    assert provisional.status == "yielded"
    assert spy.seen == ["The build cache lives in /var/cache/ci"] * 3


def test_a_twin_forgotten_after_the_plan_is_written_anew_with_its_vector(
    app: App, alice: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plan saw the twin, so the write began without a vector; the twin was gone when the lock was taken."""
    first = write(app, alice, "The release branch is cut on Thursdays")
    planned = write_path._plan

    def plan_then_forget(*args: Any) -> Any:
        plan = planned(*args)
        assert plan.repeat
        forget(app, alice, first.id)  # another client's call, between the plan and the write
        return plan

    monkeypatch.setattr(write_path, "_plan", plan_then_forget)
    again = write(app, alice, "The release branch is cut on Thursdays")
    assert again.status == "created" and again.id != first.id
    hits = recall(app, alice, "When is the release branch cut?").hits
    assert [hit.id for hit in hits][:1] == [again.id]


def test_a_write_without_a_target_is_refused(app: App, alice: Caller) -> None:
    with pytest.raises(errors.ZMError, match=r"^validation_failed: scope_target_required:"):
        write(app, alice, "Where does this go?", scope=None)


def test_an_unresolvable_hint_is_refused_when_projects_are_not_auto_created(
    make_app: Callable[..., App],
) -> None:
    app = make_app({"ZM_AUTO_CREATE_PROJECTS": "0"})
    caller = Caller("alice", client="test")
    with pytest.raises(errors.ZMError, match=r"^validation_failed: project_hint_unresolvable:"):
        write(app, caller, "A fact", project_hint="no-such-project")
    with system_tx(app.store, "test") as tx:
        assert tx.list_projects() == []


def test_a_hint_creates_a_project_and_attaches_the_session_which_keeps_it(app: App) -> None:
    caller = Caller("alice", client="test", session_id="conv-1")
    first = write(app, caller, "The web app uses React", project_hint="/work/webapp")
    assert first.scope == "proj.alice.webapp"
    assert first.session.attached_project == "proj.alice.webapp"
    # Reading another project does not move where the session writes.
    elsewhere = recall(app, caller, "anything", project_hint="/work/other")
    assert elsewhere.session.attached_project == "proj.alice.webapp"
    second = write(app, caller, "The web app is deployed on Fly", scope=None)
    assert second.scope == "proj.alice.webapp"


def test_same_session_refinement_supersedes_the_older_write(app: App) -> None:
    caller = Caller("alice", client="test", session_id="conv-7")
    older = write(app, caller, "The deploy script lives in scripts/deploy.sh")
    newer = write(app, caller, "The deploy script lives in scripts/deploy.sh.")
    assert newer.status == "created"
    assert newer.superseded == [older.id]
    assert stored(app, older.id).superseded_by == newer.id
    assert get_memory(app, caller, older.id).audit[0].action == "refine"  # newest first


def test_refinement_never_crosses_sessions(app: App) -> None:
    older = write(
        app, Caller("alice", client="test", session_id="morning"), "The deploy script lives in scripts/deploy.sh"
    )
    newer = write(
        app, Caller("alice", client="test", session_id="evening"), "The deploy script lives in scripts/deploy.sh."
    )
    assert newer.superseded == []
    assert stored(app, older.id).live


def test_long_content_gets_a_length_directive(app: App, alice: Caller) -> None:
    result = write(app, alice, "word " * 400)
    assert result.length_directive is not None


def test_core_while_a_project_is_attached_routes_to_the_project_without_a_judge(app: App) -> None:
    caller = Caller("alice", client="test", session_id="conv-9")
    write(app, caller, "The api uses FastAPI", project_hint="/work/api")
    result = write(app, caller, "Python's GIL blocks CPU-bound threads", scope="core")
    assert result.scope == "proj.alice.api"
    assert result.routed_to_project == {"project": "proj.alice.api", "reason": "no portability judge is configured"}


def test_a_decision_is_never_portable_to_core(app: App) -> None:
    caller = Caller("alice", client="test", session_id="conv-10")
    write(app, caller, "The api uses FastAPI", project_hint="/work/api")
    result = write(app, caller, "We chose Postgres over MySQL", kind="decision", scope="core")
    assert result.routed_to_project is not None
    assert "never portable" in result.routed_to_project["reason"]


def test_a_preference_goes_to_personal_without_a_judge(app: App) -> None:
    caller = Caller("alice", client="test", session_id="conv-11")
    write(app, caller, "The api uses FastAPI", project_hint="/work/api")
    result = write(app, caller, "I like short commit messages", kind="preference", scope="personal")
    assert result.scope == "user.alice"
    assert result.routed_to_project is None


def test_core_on_an_unattached_session_is_taken_as_asked(app: App, alice: Caller) -> None:
    result = write(app, alice, "Python's GIL blocks CPU-bound threads", scope="core")
    assert result.scope == "user.alice.core"


def _live(app: App) -> list:  # type: ignore[type-arg]
    with system_tx(app.store, "test") as tx:
        return tx.live_memories(limit=100)
