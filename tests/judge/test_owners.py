"""Each owner's judge: their own key when they stored one, every call in the ledger against them.

A real app on a real SQLite file; the provider is the fake OpenAI server on
127.0.0.1, reached through the real SDK.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAIServer
from tests.judge.conftest import OWNER_KEY, PAIR, SERVER_KEY, STRONG
from zero_memory import crypto, errors
from zero_memory.app import App
from zero_memory.bootstrap import build_app
from zero_memory.judge.base import FailureKind, Judged, JudgeFailure, Unjudged
from zero_memory.judge.fake import FakeJudge
from zero_memory.judge.keys import clear_owner_key, set_owner_key
from zero_memory.judge.ledger import AttributedJudge
from zero_memory.judge.owners import OwnerJudges, judge_for
from zero_memory.settings import Settings

SECRET = "test-secret-key-0123456789abcdef"
OTHER_OWNER_KEY = "sk-owner-key-zyxwvutsrq"


def judge_env(server: FakeOpenAIServer, **extra: str) -> dict[str, str]:
    return {
        "ZM_JUDGE_PROVIDER": "openai",
        "ZM_JUDGE_BASE_URL": server.base_url,
        "ZM_JUDGE_API_KEY": SERVER_KEY,
        "ZM_HYGIENE_MODEL": STRONG,
        "ZM_JUDGE_TIMEOUT_S": "5",
        "ZM_SECRET_KEY": SECRET,
        **extra,
    }


@pytest.fixture
def judging_app(make_app: Callable[..., App], openai_server: FakeOpenAIServer) -> App:
    """Alice and bob on an app whose judge is the fake OpenAI server; nobody has a key yet."""
    return make_app(judge_env(openai_server))


def ledger(app: App, **where: Any) -> list[dict[str, Any]]:
    with app.store.tx() as tx:
        return tx.ledger(**where)


def test_an_owner_s_stored_key_pays_for_their_calls_and_the_server_s_for_everyone_else(
    judging_app: App, openai_server: FakeOpenAIServer
) -> None:
    set_owner_key(judging_app.settings, judging_app.store, "alice", None, OWNER_KEY, at=judging_app.clock())
    openai_server.respond_with(lambda request: openai_server.verdict())
    assert isinstance(judge_for(judging_app.judge_factory, "alice").ask(PAIR), Judged)
    assert isinstance(judge_for(judging_app.judge_factory, "bob").ask(PAIR), Judged)
    assert [r.headers["authorization"] for r in openai_server.requests] == [
        f"Bearer {OWNER_KEY}",
        f"Bearer {SERVER_KEY}",
    ]


def test_a_call_is_attributed_to_the_memory_s_owner_whoever_started_the_run(
    judging_app: App, openai_server: FakeOpenAIServer
) -> None:
    """A sweep started by alice that reviews bob's memory: bob's ledger row, alice's run."""
    openai_server.enqueue(openai_server.verdict(prompt_tokens=321, completion_tokens=45))
    judge_for(judging_app.judge_factory, "bob", run_id="run-started-by-alice").ask(PAIR)
    [row] = ledger(judging_app)
    assert row["owner"] == "bob"
    assert row["run_id"] == "run-started-by-alice"
    assert (row["model"], row["purpose"], row["outcome"]) == (STRONG, "scan", "judged")
    assert (row["input_tokens"], row["output_tokens"]) == (321, 45)
    assert ledger(judging_app, owner="alice") == []


def test_the_ledger_row_is_stamped_by_the_app_s_clock(
    make_app: Callable[..., App], openai_server: FakeOpenAIServer
) -> None:
    frozen = datetime(2031, 5, 4, 12, 0, tzinfo=UTC)
    app = make_app(judge_env(openai_server), clock=lambda: frozen)
    openai_server.enqueue(openai_server.verdict())
    judge_for(app.judge_factory, "alice").ask(PAIR)
    assert ledger(app)[0]["at"].startswith("2031-05-04T12:00")


def test_a_failed_call_is_recorded_with_its_kind_and_what_it_cost(
    judging_app: App, openai_server: FakeOpenAIServer
) -> None:
    openai_server.enqueue(openai_server.completion("this is not JSON", prompt_tokens=99, completion_tokens=7))
    result = judge_for(judging_app.judge_factory, "alice", run_id="r1").ask(PAIR)
    assert isinstance(result, JudgeFailure)
    [row] = ledger(judging_app, run_id="r1")
    assert (row["owner"], row["outcome"], row["input_tokens"], row["output_tokens"]) == ("alice", "malformed", 99, 7)


def test_the_default_factory_takes_owner_and_run_id(judging_app: App, openai_server: FakeOpenAIServer) -> None:
    assert isinstance(judging_app.judge_factory, OwnerJudges)
    judge = judging_app.judge_factory("bob", "run-7")
    assert isinstance(judge, AttributedJudge)
    assert (judge.owner, judge.run_id, judge.provider) == ("bob", "run-7", "openai")
    openai_server.enqueue(openai_server.verdict())
    judge.ask(PAIR)
    assert [(r["owner"], r["run_id"]) for r in ledger(judging_app)] == [("bob", "run-7")]


def test_offer_mode_asks_nobody_and_records_nothing(make_app: Callable[..., App]) -> None:
    app = make_app({"ZM_SECRET_KEY": SECRET})
    judge = judge_for(app.judge_factory, "alice", run_id="r1")
    assert judge.provider == "none"
    assert isinstance(judge.ask(PAIR), Unjudged)
    assert ledger(app) == []


def test_a_sweep_builds_each_client_once(judging_app: App) -> None:
    set_owner_key(judging_app.settings, judging_app.store, "alice", None, OWNER_KEY, at=judging_app.clock())
    judges = [
        judge_for(judging_app.judge_factory, owner, run_id=f"r{i}") for i in range(3) for owner in ("alice", "bob")
    ]
    inner = [j.inner for j in judges if isinstance(j, AttributedJudge)]
    assert len(inner) == 6
    alices, bobs = inner[0::2], inner[1::2]
    assert all(j is alices[0] for j in alices)
    assert all(j is bobs[0] for j in bobs)
    assert alices[0] is not bobs[0]


def test_owners_without_a_key_share_the_server_s_client(judging_app: App) -> None:
    alice, bob = judge_for(judging_app.judge_factory, "alice"), judge_for(judging_app.judge_factory, "bob")
    assert isinstance(alice, AttributedJudge) and isinstance(bob, AttributedJudge)
    assert alice.inner is bob.inner


def test_a_new_key_is_used_from_the_next_call_and_clearing_it_returns_to_the_server_s(
    judging_app: App, openai_server: FakeOpenAIServer
) -> None:
    openai_server.respond_with(lambda request: openai_server.verdict())
    set_owner_key(judging_app.settings, judging_app.store, "alice", None, OWNER_KEY, at=judging_app.clock())
    judge_for(judging_app.judge_factory, "alice").ask(PAIR)
    set_owner_key(judging_app.settings, judging_app.store, "alice", "openai", OTHER_OWNER_KEY, at=judging_app.clock())
    judge_for(judging_app.judge_factory, "alice").ask(PAIR)
    assert clear_owner_key(judging_app.settings, judging_app.store, "alice", None, at=judging_app.clock()) is True
    judge_for(judging_app.judge_factory, "alice").ask(PAIR)
    assert [r.api_key for r in openai_server.requests] == [OWNER_KEY, OTHER_OWNER_KEY, SERVER_KEY]


def test_a_key_stored_by_another_process_is_seen_on_the_next_call(
    judging_app: App, openai_server: FakeOpenAIServer, embedder: Any
) -> None:
    openai_server.respond_with(lambda request: openai_server.verdict())
    judge_for(judging_app.judge_factory, "alice").ask(PAIR)  # the server's key, cached
    other = build_app(judging_app.settings, embedder=embedder)  # e.g. `zm user key set` while the server runs
    try:
        set_owner_key(other.settings, other.store, "alice", None, OWNER_KEY, at=other.clock())
    finally:
        other.close()
    judge_for(judging_app.judge_factory, "alice").ask(PAIR)
    assert [r.api_key for r in openai_server.requests] == [SERVER_KEY, OWNER_KEY]


def test_a_key_for_another_provider_is_not_used(judging_app: App, openai_server: FakeOpenAIServer) -> None:
    set_owner_key(judging_app.settings, judging_app.store, "alice", "anthropic", OWNER_KEY, at=judging_app.clock())
    openai_server.enqueue(openai_server.verdict())
    judge_for(judging_app.judge_factory, "alice").ask(PAIR)
    assert openai_server.last_request.api_key == SERVER_KEY


def test_a_key_that_no_longer_decrypts_is_refused_never_replaced_by_the_server_s(
    judging_app: App, openai_server: FakeOpenAIServer, embedder: Any
) -> None:
    set_owner_key(judging_app.settings, judging_app.store, "alice", None, OWNER_KEY, at=judging_app.clock())
    with judging_app.store.tx() as tx:
        ciphertext = tx.get_provider_key("alice", "openai")
    assert ciphertext is not None
    other_secret = crypto.generate_secret_key()
    moved = build_app(judging_app.settings.with_changes(secret_key=other_secret), embedder=embedder)
    try:
        with pytest.raises(errors.ZMError) as caught:
            moved.judge_factory("alice", None)
        failure = judge_for(moved.judge_factory, "alice").ask(PAIR)
        assert isinstance(failure, JudgeFailure) and failure.kind is FailureKind.UNAVAILABLE
        for told in (str(caught.value), failure.detail):
            assert told.startswith("unavailable: ")
            assert "zm user key set" in told
            for secret in (OWNER_KEY, SECRET, other_secret, ciphertext, SERVER_KEY):
                assert secret not in told
        assert isinstance(judge_for(moved.judge_factory, "bob"), AttributedJudge)  # bob has no key: unaffected
    finally:
        moved.close()
    assert openai_server.requests == []


def test_no_key_appears_in_a_judge_s_repr(judging_app: App) -> None:
    set_owner_key(judging_app.settings, judging_app.store, "alice", None, OWNER_KEY, at=judging_app.clock())
    text = repr(judge_for(judging_app.judge_factory, "alice")) + repr(judging_app.judge_factory)
    assert OWNER_KEY not in text and SERVER_KEY not in text


def test_a_factory_given_to_build_app_is_the_one_every_lookup_uses(tmp_path: Path, embedder: Any) -> None:
    fake = FakeJudge(default="unrelated")
    settings = Settings.from_environ({"ZM_HOME": str(tmp_path / "home"), "ZM_SECRET_KEY": SECRET})
    app = build_app(settings, embedder=embedder, judge_factory=lambda owner, run_id: fake)
    try:
        assert app.judge_factory("alice", None) is fake
        assert judge_for(app.judge_factory, "alice") is fake
    finally:
        app.close()
