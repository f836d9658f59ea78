"""Loop closure through full cycles (``zm hygiene scan``), with the judge behind a fake OpenAI-compatible
server on 127.0.0.1: closes at 0.85 and above, never below, fails closed on a broken answer, is undone by
``zm hygiene undo``, and never closes again a loop someone reopened."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.harness import Result, Zm
from tests.fakes.openai_server import FakeOpenAIServer, RecordedRequest, Reply
from zero_memory.store import open_store

SHIPPED = "Ship the CSV export of invoices"
STARTED = "Migrate the billing cron job to the scheduler"
BROKEN = "Write the docs for the invoice PDF endpoint"
REOPENED = "Rotate the payment provider webhook secret"


def schema(request: RecordedRequest) -> str:
    return str(request.body["response_format"]["json_schema"]["name"])


def judge(request: RecordedRequest) -> Reply:
    if schema(request) == "portability_verdict":
        return FakeOpenAIServer.portability(False, 0.9, "Project-specific.")
    if schema(request) == "hygiene_verdict":
        return FakeOpenAIServer.verdict("unrelated", 0.9, "Different subjects.")
    text = FakeOpenAIServer.user_message(request)
    answer = {"rationale": "The later memory reports it done.", "closed": True, "confidence": 0.93}
    if STARTED in text:
        answer = {"rationale": "Started, not finished.", "closed": True, "confidence": 0.6}
    if BROKEN in text:
        return FakeOpenAIServer.completion('{"closed": "maybe"')
    return FakeOpenAIServer.completion(json.dumps(answer))


@pytest.fixture
def judged(zm: Zm) -> Iterator[tuple[Zm, FakeOpenAIServer]]:
    with FakeOpenAIServer() as fake:
        fake.respond_with(judge)
        env = {
            "ZM_JUDGE_PROVIDER": "openai",
            "ZM_JUDGE_BASE_URL": fake.base_url,
            "ZM_JUDGE_API_KEY": "test-key",
            "ZM_HYGIENE_MODEL": "judge-strong",
            "ZM_HYGIENE_FAST_MODEL": "judge-fast",
            "ZM_JUDGE_TIMEOUT_S": "10",
        }

        def run(*args: str) -> Result:
            done = zm(*args, env=env)
            assert done.exit_code == 0, done.stderr
            return done

        yield run, fake


def remember(zm: Zm, text: str, kind: str, *extra: str) -> str:
    return str(zm("remember", text, "--kind", kind, "--project", "/srv/billing", *extra, "--json").json()["id"])


def loop_requests(fake: FakeOpenAIServer, text: str) -> int:
    return sum(
        1 for r in fake.requests if schema(r) == "loop_closure_verdict" and text in FakeOpenAIServer.user_message(r)
    )


def test_loop_closure_closes_confidently_fails_closed_and_is_undone(
    judged: tuple[Zm, FakeOpenAIServer], tmp_path: Path
) -> None:
    zm, fake = judged
    shipped = remember(zm, SHIPPED, "task")
    started = remember(zm, STARTED, "task")
    broken = remember(zm, BROKEN, "task")
    reopened = remember(zm, REOPENED, "task")
    zm("close-loop", reopened, "--note", "done, I thought")
    zm("restore", reopened)
    shipped_by = remember(zm, f"{SHIPPED}: done, it shipped in release 2.4", "episode")
    remember(zm, f"{STARTED}: started, half the jobs are moved", "episode")
    remember(zm, f"{BROKEN}: the docs are written", "episode")
    remember(zm, f"{REOPENED}: rotated on Monday", "episode", "--provisional")

    scan = zm("hygiene", "scan", "--json").json()
    assert scan["status"] == "completed"
    assert scan["loops_closed"] == 1 and scan["failed_judgements"] >= 1

    row = zm("get", shipped, "--json").json()
    assert row["memory"]["status"] == "invalidated" and row["memory"]["invalidated_reason"] == "closed"
    closing = next(a for a in row["audit"] if a["action"] == "close_loop")
    assert closing["actor"] == "hygiene.loop_closure" and closing["run_id"] == scan["run_id"]
    assert closing["payload"]["evidence"] == shipped_by and closing["payload"]["confidence"] == 0.93
    assert closing["payload"]["model"] == "judge-strong"
    assert {"type": "relates_to", "src": shipped_by, "dst": shipped} in [
        {k: lk[k] for k in ("type", "src", "dst")} for lk in row["links"]
    ]
    assert zm("get", started, "--json").json()["memory"]["status"] == "live"  # 0.6: below the floor
    assert zm("get", broken, "--json").json()["memory"]["status"] == "live"  # a broken answer: nothing
    assert zm("get", reopened, "--json").json()["memory"]["status"] == "live"
    assert loop_requests(fake, REOPENED) == 0  # reopened by a person: never asked about again
    open_ids = [lp["id"] for lp in zm("loops", "--json").json()["loops"]]
    assert shipped not in open_ids and {started, broken, reopened} <= set(open_ids)

    undone = zm("hygiene", "undo", scan["run_id"], "--json").json()
    assert undone["restored"] == [shipped] and undone["unlinked"] == 1
    assert shipped in [lp["id"] for lp in zm("loops", "--json").json()["loops"]]
    assert zm("get", shipped, "--json").json()["links"] == []

    asked_broken = loop_requests(fake, BROKEN)
    again = zm("hygiene", "scan", "--json").json()
    assert again["loops_closed"] == 0
    assert zm("get", shipped, "--json").json()["memory"]["status"] == "live"  # reopened by the undo
    assert loop_requests(fake, SHIPPED) == 1
    assert loop_requests(fake, STARTED) == 1 and again["skipped_cached"] >= 1  # cached, not asked again
    assert loop_requests(fake, BROKEN) == asked_broken + 1  # nothing cached: asked again, fails closed again

    store = open_store(f"sqlite:///{tmp_path / 'zm-home' / 'zm.db'}")
    try:
        with store.tx() as tx:
            rows = [r for r in tx.ledger() if r["purpose"] == "loop_closure"]
    finally:
        store.close()
    assert rows and {r["owner"] for r in rows} == {zm("user", "list", "--json").json()[0]["id"]}
    assert {r["model"] for r in rows} == {"judge-strong"}


def test_offer_mode_closes_nothing(zm: Zm) -> None:
    task = remember(zm, SHIPPED, "task")
    remember(zm, f"{SHIPPED}: done, it shipped in release 2.4", "episode")
    scan = zm("hygiene", "scan", "--json").json()
    assert scan["loops_closed"] == 0 and scan["judged"] == 0
    assert zm("get", task, "--json").json()["memory"]["status"] == "live"
