"""The portability judge behind the write-time gate and the audit pass (docs/spec/hygiene.md §10).

The gate is driven end to end through ``remember``: a project is attached, the
agent asks for ``scope: "core"``, and the owner's judge decides. Anything but a
confident "portable" — a low confidence, ``portable: false``, a timeout, a
malformed answer — routes the memory to the project with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.fakes import fixtures
from tests.fakes.openai_server import FakeOpenAIServer
from tests.memory.helpers import write
from zero_memory import crypto
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.domain.memory import Kind, Memory
from zero_memory.domain.verdicts import PortabilityVerdict
from zero_memory.judge.base import FailureKind, Unjudged
from zero_memory.judge.fake import FakeJudge
from zero_memory.judge.keys import set_owner_key
from zero_memory.judge.owners import judge_for
from zero_memory.judge.prompt import JudgedMemory
from zero_memory.judge.question import Purpose
from zero_memory.judge.questions.portability import PortabilityRequest, audit, gate_check
from zero_memory.memory.models import RememberResult
from zero_memory.store import SYSTEM

SERVER_KEY = "sk-server-key-0123456789"
OWNER_KEY = "sk-owner-key-abcdefghij"
SECRET = "test-secret-key-0123456789abcdef"
PROJECT = "proj.alice.api"
# The fake OpenAI server, one per test, as a fixture of this module.
openai_server = fixtures.openai_server

PORTABLE_FACT = "Python's GIL keeps CPU-bound threads from running in parallel"


def portable(confidence: float, rationale: str = "True of CPython anywhere.") -> PortabilityVerdict:
    return PortabilityVerdict(portable=True, confidence=confidence, rationale=rationale)


def app_judged_by(make_app: Callable[..., App], fake: FakeJudge) -> App:
    return make_app({"ZM_SECRET_KEY": SECRET}, judge_factory=lambda owner, run_id: fake)


def app_judged_by_server(make_app: Callable[..., App], server: FakeOpenAIServer, **env: str) -> App:
    """The default judge factory, configured as ``ZM_*`` variables, pointed at the fake server."""
    return make_app(
        {
            "ZM_JUDGE_PROVIDER": "openai",
            "ZM_JUDGE_BASE_URL": server.base_url,
            "ZM_JUDGE_API_KEY": SERVER_KEY,
            "ZM_HYGIENE_MODEL": "judge-strong-1",
            "ZM_JUDGE_TIMEOUT_S": "5",
            "ZM_SECRET_KEY": SECRET,
            **env,
        }
    )


def ask_for_core(app: App, content: str = PORTABLE_FACT, kind: str = "fact", scope: str = "core") -> RememberResult:
    """A write asking for ``scope`` from a session attached to the api project."""
    caller = Caller("alice", client="test-client", session_id="conv-1")
    write(app, caller, "The api service uses FastAPI", project_hint="/work/api")
    return write(app, caller, content, kind=kind, scope=scope)


def ledger(app: App) -> list[dict[str, Any]]:
    with app.store.tx() as tx:
        return tx.ledger()


# -- the gate, through remember ----------------------------------------------


def test_a_confident_portable_verdict_lets_the_memory_into_core(make_app: Callable[..., App]) -> None:
    fake = FakeJudge([portable(0.8)])
    result = ask_for_core(app_judged_by(make_app, fake))
    assert result.scope == "user.alice.core"
    assert result.routed_to_project is None
    [request] = fake.requests
    assert request == PortabilityRequest(JudgedMemory("fact", 0.0, PORTABLE_FACT), Purpose.GATE)


def test_confidence_exactly_at_the_floor_is_enough(make_app: Callable[..., App]) -> None:
    result = ask_for_core(app_judged_by(make_app, FakeJudge([portable(0.7)])))
    assert result.scope == "user.alice.core"


def test_personal_is_gated_the_same_way(make_app: Callable[..., App]) -> None:
    fake = FakeJudge([portable(0.9)])
    result = ask_for_core(app_judged_by(make_app, fake), kind="gotcha", scope="personal")
    assert result.scope == "user.alice"
    assert fake.requests == [PortabilityRequest(JudgedMemory("gotcha", 0.0, PORTABLE_FACT), Purpose.GATE)]


def test_low_confidence_routes_the_memory_to_the_project(make_app: Callable[..., App]) -> None:
    result = ask_for_core(app_judged_by(make_app, FakeJudge([portable(0.69)])))
    assert result.scope == PROJECT
    assert result.routed_to_project == {
        "project": PROJECT,
        "reason": "the judge's confidence 0.69 is below 0.70",
    }


def test_a_project_specific_verdict_routes_it_with_the_judge_s_reason(make_app: Callable[..., App]) -> None:
    verdict = PortabilityVerdict(portable=False, confidence=0.95, rationale="Names this repo's CI runner.")
    result = ask_for_core(app_judged_by(make_app, FakeJudge([verdict])))
    assert result.scope == PROJECT
    assert result.routed_to_project == {
        "project": PROJECT,
        "reason": "the judge found it project-specific: Names this repo's CI runner.",
    }


@pytest.mark.parametrize("answer", [FailureKind.TIMEOUT, FailureKind.RATE_LIMITED, FailureKind.REFUSAL, Unjudged()])
def test_no_verdict_denies(make_app: Callable[..., App], answer: Any) -> None:
    result = ask_for_core(app_judged_by(make_app, FakeJudge([answer])))
    assert result.scope == PROJECT
    assert result.routed_to_project == {"project": PROJECT, "reason": "the portability judge gave no valid verdict"}


def test_a_kind_that_is_never_portable_is_not_judged(make_app: Callable[..., App]) -> None:
    fake = FakeJudge()
    result = ask_for_core(app_judged_by(make_app, fake), content="We chose Postgres over MySQL", kind="decision")
    assert result.scope == PROJECT
    assert fake.requests == []


def test_offer_mode_says_no_judge_is_configured(make_app: Callable[..., App]) -> None:
    app = make_app({"ZM_SECRET_KEY": SECRET})
    assert gate_check(judge_for(app.judge_factory, "alice")) is None
    result = ask_for_core(app)
    assert result.routed_to_project == {"project": PROJECT, "reason": "no portability judge is configured"}


# -- the gate over the real SDK ------------------------------------------------


def test_a_malformed_answer_from_the_provider_routes_the_memory_and_is_recorded(
    make_app: Callable[..., App], openai_server: FakeOpenAIServer
) -> None:
    openai_server.enqueue(openai_server.completion('{"portable": true, "confidence": 0.99'))  # cut short
    app = app_judged_by_server(make_app, openai_server)
    result = ask_for_core(app)
    assert result.scope == PROJECT
    assert result.routed_to_project == {"project": PROJECT, "reason": "the portability judge gave no valid verdict"}
    body = openai_server.last_request.body
    assert body["response_format"]["json_schema"]["name"] == "portability_verdict"
    assert PORTABLE_FACT in openai_server.user_message(openai_server.last_request)
    [row] = ledger(app)
    assert (row["owner"], row["purpose"], row["outcome"], row["run_id"]) == ("alice", "gate", "malformed", None)


def test_a_confident_answer_from_the_provider_grants_core_on_the_owner_s_key(
    make_app: Callable[..., App], openai_server: FakeOpenAIServer
) -> None:
    openai_server.enqueue(openai_server.portability(True, 0.9))
    app = app_judged_by_server(make_app, openai_server)
    set_owner_key(app.settings, app.store, "alice", None, OWNER_KEY, at=app.clock())
    result = ask_for_core(app)
    assert result.scope == "user.alice.core"
    assert openai_server.last_request.api_key == OWNER_KEY
    assert [(r["owner"], r["purpose"], r["outcome"]) for r in ledger(app)] == [("alice", "gate", "judged")]


def test_a_timeout_at_the_provider_routes_the_memory(
    make_app: Callable[..., App], openai_server: FakeOpenAIServer
) -> None:
    openai_server.enqueue(openai_server.portability(True, 0.99).delayed(3))
    app = app_judged_by_server(make_app, openai_server, ZM_JUDGE_TIMEOUT_S="0.5")
    result = ask_for_core(app)
    assert result.scope == PROJECT
    assert [r["outcome"] for r in ledger(app)] == ["timeout"]


def test_a_stored_key_that_no_longer_decrypts_denies_and_the_write_still_lands(
    make_app: Callable[..., App], openai_server: FakeOpenAIServer
) -> None:
    app = app_judged_by_server(make_app, openai_server)
    with app.store.tx(write=True) as tx:
        stale = crypto.encrypt(crypto.generate_secret_key(), OWNER_KEY)  # written under another ZM_SECRET_KEY
        tx.set_provider_key("alice", "openai", stale, app.clock())
    result = ask_for_core(app)
    assert result.status == "created"
    assert result.routed_to_project == {"project": PROJECT, "reason": "the portability judge gave no valid verdict"}
    assert openai_server.requests == []


# -- the audit pass --------------------------------------------------------------


def project_memory(app: App) -> Memory:
    caller = Caller("bob", client="test-client", session_id="conv-2")
    result = write(
        app, caller, "uv sync ignores the lockfile unless --frozen is passed", kind="gotcha", project_hint="/work/shop"
    )
    with app.store.tx() as tx:
        memory = tx.get_memory(result.id, SYSTEM)
    assert memory is not None
    return memory


def test_the_audit_asks_about_the_memory_for_its_owner(make_app: Callable[..., App]) -> None:
    fake = FakeJudge([portable(0.85, "True of uv anywhere.")])
    asked: list[tuple[str, str | None]] = []

    def factory(owner: str, run_id: str | None) -> FakeJudge:
        asked.append((owner, run_id))
        return fake

    app = make_app({"ZM_SECRET_KEY": SECRET}, judge_factory=factory)
    memory = project_memory(app)
    assert audit(judge_for(app.judge_factory, "bob", "run-1"), memory, app.clock()) == (
        True,
        0.85,
        "True of uv anywhere.",
    )
    assert asked == [("bob", "run-1")]
    [request] = fake.requests
    assert isinstance(request, PortabilityRequest)
    assert request.purpose is Purpose.PORTABILITY
    assert (request.memory.kind, request.memory.content) == ("gotcha", memory.content)


@pytest.mark.parametrize("answer", [FailureKind.MALFORMED, FailureKind.TIMEOUT, Unjudged()])
def test_the_audit_gets_none_without_a_verdict(make_app: Callable[..., App], answer: Any) -> None:
    app = app_judged_by(make_app, FakeJudge([answer]))
    assert audit(judge_for(app.judge_factory, "bob", "run-1"), project_memory(app), app.clock()) is None


def test_the_audit_s_calls_land_in_the_owner_s_ledger_within_the_run(
    make_app: Callable[..., App], openai_server: FakeOpenAIServer
) -> None:
    openai_server.enqueue(openai_server.portability(False, 0.8, "Names this repo."))
    app = app_judged_by_server(make_app, openai_server)
    assert audit(judge_for(app.judge_factory, "bob", "run-9"), project_memory(app), app.clock()) == (
        False,
        0.8,
        "Names this repo.",
    )
    [row] = ledger(app)
    assert (row["owner"], row["purpose"], row["run_id"], row["outcome"]) == ("bob", "portability", "run-9", "judged")


def test_the_gate_check_takes_content_and_kind(make_app: Callable[..., App]) -> None:
    app = app_judged_by(make_app, FakeJudge([portable(0.75)]))
    check = gate_check(judge_for(app.judge_factory, "alice"))
    assert check is not None
    assert check("Tabs render as 8 columns in less by default", Kind.FACT) == (True, 0.75, "True of CPython anywhere.")
