"""Recall: hybrid retrieval, ranking factors, the read set, surfacings."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from tests.memory.helpers import write
from zero_memory import errors
from zero_memory.access import users
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.bootstrap import build_app
from zero_memory.clock import utcnow
from zero_memory.domain.memory import Kind, Memory, Status
from zero_memory.domain.records import Channel
from zero_memory.embedding.hashing import HashingEmbedder
from zero_memory.memory.recall import RECENCY_BONUS, TEXT_WEIGHT, recall, relevance, score
from zero_memory.settings import Settings
from zero_memory.store import system_tx


def test_relevance_adds_the_weighted_text_score_to_the_similarity() -> None:
    assert relevance(0.5, 0.0) == 0.5
    assert relevance(0.5, 1.0) > relevance(0.5, 0.5) > relevance(0.5, 0.0)
    assert relevance(-0.2, 0.0) == 0.0


def test_recall_finds_by_meaning_and_by_exact_words(app: App, alice: Caller) -> None:
    port = write(app, alice, "The API server listens on port 8080")
    code = write(app, alice, "Error E4711 means the license file is missing")
    write(app, alice, "Bananas are rich in potassium")
    by_meaning = recall(app, alice, "which port does the backend use")
    assert by_meaning.hits[0].id == port.id
    by_words = recall(app, alice, "E4711")
    assert by_words.hits[0].id == code.id


def test_recall_across_languages(app: App, alice: Caller) -> None:
    fact = write(app, alice, "Der API-Server lauscht auf Port 8080")
    write(app, alice, "Bananas are rich in potassium")
    assert recall(app, alice, "The API server listens on port 8080").hits[0].id == fact.id


def test_provisional_ranks_below_authoritative_at_equal_relevance(app: App, alice: Caller) -> None:
    now = utcnow()

    def memory(rank: int) -> Memory:
        return Memory(
            id=f"m{rank}",
            owner="alice",
            scope="user.alice",
            kind=Kind.FACT,
            content="x",
            author_kind="agent",
            agent_name="t",
            rank=rank,
            source={},
            created_at=now,  # type: ignore[arg-type]
            updated_at=now,
        )

    assert score(1.0, memory(0), 0, 0, False) < score(1.0, memory(1), 0, 0, False)


def test_open_tasks_never_decay_and_episodes_decay_faster_than_decisions() -> None:
    now = utcnow()
    episode = Memory(
        id="t",
        owner="a",
        scope="user.a",
        kind=Kind.EPISODE,
        content="x",
        author_kind="agent",  # type: ignore[arg-type]
        agent_name="t",
        rank=1,
        source={},
        created_at=now,
        updated_at=now,
    )  # type: ignore[arg-type]
    decision = Memory(
        id="d",
        owner="a",
        scope="user.a",
        kind=Kind.DECISION,
        content="x",
        author_kind="agent",
        agent_name="t",
        rank=1,
        source={},
        created_at=now,  # type: ignore[arg-type]
        updated_at=now,
    )
    task = replace(episode, id="k", kind=Kind.TASK)
    # Age only moves the recency bonus (all of it when new), never the relevance (here 1.0).
    assert score(1.0, task, 60, 0, False) == pytest.approx(1.0 + RECENCY_BONUS)  # a live task is open: in sight
    closed = replace(task, status=Status.INVALIDATED)
    assert score(1.0, closed, 28, 0, False) == pytest.approx(1.0 + 0.25 * RECENCY_BONUS)  # closed: 14 days
    assert score(1.0, episode, 60, 0, False) == pytest.approx(1.0 + 0.25 * RECENCY_BONUS)
    assert score(1.0, decision, 60, 0, False) > 1.0 + 0.98 * RECENCY_BONUS


def test_the_default_read_set_is_the_project_plus_personal_and_core(app: App) -> None:
    caller = Caller("alice", client="test", session_id="c1")
    in_project = write(app, caller, "The webapp builds with Vite", project_hint="/src/webapp")
    in_other = write(app, Caller("alice", client="test"), "The mobile app builds with Vite", project_hint="/src/mobile")
    personal = write(app, caller, "I build frontends with Vite", scope="personal")
    ids = {h.id for h in recall(app, caller, "builds with Vite").hits}
    assert in_project.id in ids and personal.id in ids
    assert in_other.id not in ids
    widened = {h.id for h in recall(app, caller, "builds with Vite", scopes_arg=["*"]).hits}
    assert in_other.id in widened
    by_slug = {h.id for h in recall(app, caller, "builds with Vite", scopes_arg=["mobile"]).hits}
    assert by_slug == {in_other.id}


def test_recall_never_returns_another_users_memory(app: App, alice: Caller, bob: Caller) -> None:
    write(app, bob, "Bob's secret project codename is Falcon")
    assert recall(app, alice, "project codename Falcon", scopes_arg=["*"]).hits == []
    with pytest.raises(errors.ZMError, match=r"^validation_failed: scope:"):
        recall(app, alice, "Falcon", scopes_arg=["user.bob"])


def test_forgotten_memories_are_not_recalled(app: App, alice: Caller) -> None:
    from zero_memory.memory.lifecycle import forget

    fact = write(app, alice, "The nightly job runs at 02:00 UTC")
    forget(app, alice, fact.id)
    assert recall(app, alice, "nightly job").hits == []


def test_kinds_filter_and_limit(app: App, alice: Caller) -> None:
    write(app, alice, "Use ruff for linting", kind="convention")
    write(app, alice, "ruff replaced flake8 in March", kind="fact")
    hits = recall(app, alice, "ruff linting", kinds=[Kind.CONVENTION]).hits
    assert [h.kind for h in hits] == [Kind.CONVENTION]
    assert len(recall(app, alice, "ruff", limit=1).hits) == 1
    with pytest.raises(errors.ZMError, match=r"^validation_failed: limit"):
        recall(app, alice, "ruff", limit=51)


def test_every_hit_is_recorded_as_a_surfacing_with_its_session_and_channel(app: App, alice: Caller) -> None:
    fact = write(app, alice, "The staging cluster runs Kubernetes 1.31")
    recall(app, alice, "staging cluster kubernetes", session_id="s1")
    recall(app, alice, "staging cluster kubernetes", session_id="s1")
    recall(app, Caller("alice", client="test", session_id="s2"), "staging cluster kubernetes")
    recall(app, alice, "staging cluster kubernetes", channel=Channel.CLI)
    since = utcnow() - timedelta(days=1)
    with system_tx(app.store, "test") as tx:
        assert tx.surfacings_of([fact.id], since=since) == {fact.id: 4}
        assert tx.sessions_served([fact.id], since=since, channel=Channel.RECALL) == {fact.id: 2}
        assert tx.sessions_served([fact.id], since=since, channel=Channel.CLI) == {}


def test_old_core_facts_carry_stale_days(make_app, embedder) -> None:  # type: ignore[no-untyped-def]
    past = utcnow() - timedelta(days=200)
    app = make_app(clock=lambda: past)
    caller = Caller("alice", client="test")
    write(app, caller, "Node 20 is the current LTS release", scope="core")
    app.clock = utcnow
    hit = recall(app, caller, "Node LTS release").hits[0]
    assert hit.stale_days == 20


def test_a_memory_a_model_of_another_size_embedded_is_found_by_its_words(tmp_path: Path) -> None:
    """After a change of embedding model, until ``zm db reindex``, a memory whose vector the former model made
    (of another size) is still found by its words, its similarity counted as none: not an error."""
    env = {"ZM_HOME": str(tmp_path), "ZM_USER": "alice", "ZM_QUERY_PROCESS": "0"}
    before = build_app(Settings.from_environ(env), embedder=HashingEmbedder(256))
    with system_tx(before.store, "test-setup", write=True) as tx:
        users.add_user(tx, "alice", is_local=True)
    alice = Caller("alice", client="test")
    old = write(before, alice, "The zanzibar deploy runs on Fridays")
    before.close()
    after = build_app(Settings.from_environ(env), embedder=HashingEmbedder(128))
    try:
        new = write(after, alice, "The zanzibar release train leaves on Mondays")
        hits = recall(after, alice, "zanzibar deploy", channel=None).hits
    finally:
        after.close()
    assert [h.id for h in hits] == [old.id, new.id]
    assert hits[0].score < TEXT_WEIGHT + RECENCY_BONUS + 0.01  # its words and its age: no similarity


def test_browsing_without_recording_leaves_no_surfacing(app: App, alice: Caller) -> None:
    fact = write(app, alice, "The staging cluster runs Kubernetes 1.31")
    assert recall(app, alice, "staging cluster kubernetes", channel=None).hits
    with system_tx(app.store, "test") as tx:
        assert tx.surfacings_of([fact.id], since=utcnow() - timedelta(days=1)) == {}


def test_a_recall_resolves_its_hint_once_and_settles_it_once_per_session(
    app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    import zero_memory.memory.targets as targets

    resolved: list[str] = []
    writes: list[bool] = []
    resolve, tx = targets.resolve_hint, app.store.tx

    def counting_resolve(*args: object, **kwargs: object) -> object:
        resolved.append(str(args[2]))
        return resolve(*args, **kwargs)  # type: ignore[arg-type]

    def counting_tx(*args: object, write: bool = False, **kwargs: object) -> object:
        writes.append(write)
        return tx(*args, write=write, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(targets, "resolve_hint", counting_resolve)
    monkeypatch.setattr(app.store, "tx", counting_tx)
    caller = Caller("alice", client="test", session_id="sess-hint")
    first = recall(app, caller, "how is the webapp built", project_hint="/src/webapp")
    # Looked at once in the read, then written once: the project created, the session attached.
    assert first.session.attached_project == "proj.alice.webapp"
    assert len(resolved) == 2 and writes.count(True) == 1
    with system_tx(app.store, "test") as read:
        assert read.get_project("proj.alice.webapp") is not None
        assert read.get_session("alice", "sess-hint") == "proj.alice.webapp"
    resolved.clear()
    writes.clear()
    second = recall(app, caller, "how is the webapp built", project_hint="/src/webapp")
    assert second.session.attached_project == "proj.alice.webapp"
    assert resolved == ["/src/webapp"] and True not in writes
