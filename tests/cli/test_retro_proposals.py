"""The retro pass proposes, through the real ``zm`` binary: a retro row carries the action the pass
would have taken automatically (its winner and loser), ``zm conflicts list`` shows it, and
``zm conflicts resolve --accept`` carries it out; ``--offer`` does not park a pair a judge already
found unrelated. The judge is a fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.cli.harness import Result, Zm
from tests.fakes.openai_server import FakeOpenAIServer, RecordedRequest, Reply

OLD = "The build cache lives in /var/cache/build"
NEW = "The build cache lives in /var/cache/build on every runner"
GREEN = "The staging database is green"
BLUE = "The staging database is blue"
TTL_SHORT = "The session cache TTL is five minutes"
TTL_LONG = "The session cache TTL is thirty minutes"


def judge(request: RecordedRequest) -> Reply:
    if FakeOpenAIServer.schema_name(request) == "portability_verdict":
        return FakeOpenAIServer.portability(False, 0.9, "Project-specific.")
    text = FakeOpenAIServer.user_message(request)
    if "build cache" in text:
        return FakeOpenAIServer.verdict("duplicate", 0.97, "The same location, stated twice.")
    if "staging database" in text:
        return FakeOpenAIServer.verdict("contradiction", 0.92, "Both cannot be the staging colour.")
    if "session cache" in text:
        return FakeOpenAIServer.verdict("unrelated", 0.9, "Different caches.")
    return FakeOpenAIServer.completion('{"verdict": "maybe"')  # malformed: fails closed, nothing cached


@pytest.fixture
def judged(zm_binary: Zm) -> Iterator[tuple[Zm, FakeOpenAIServer]]:
    with FakeOpenAIServer() as fake:
        fake.respond_with(judge)
        env = {
            "ZM_JUDGE_PROVIDER": "openai",
            "ZM_JUDGE_BASE_URL": fake.base_url,
            "ZM_JUDGE_API_KEY": "test-key",
            "ZM_HYGIENE_MODEL": "judge-strong",
            "ZM_JUDGE_TIMEOUT_S": "10",
        }
        yield Zm({**zm_binary.env, **env}, binary=True), fake


def ok(result: Result) -> Result:
    assert result.exit_code == 0, result.stderr
    return result


def remember(zm: Zm, text: str) -> str:
    return str(ok(zm("remember", text, "--kind", "fact", "--scope", "personal", "--json")).json()["id"])


def rows(zm: Zm) -> list[dict[str, Any]]:
    return ok(zm("conflicts", "list", "--json")).json()["conflicts"]  # type: ignore[no-any-return]


def test_a_retro_row_proposes_what_the_pass_would_have_done_and_the_proposal_can_be_accepted(
    judged: tuple[Zm, FakeOpenAIServer],
) -> None:
    zm, _ = judged
    old, new = remember(zm, OLD), remember(zm, NEW)
    green, blue = remember(zm, GREEN), remember(zm, BLUE)
    report = ok(zm("hygiene", "retro", "--max", "10", "--json")).json()
    assert report["queued"] == 2 and report["auto_resolved"] == 0

    by_pair = {frozenset((r["memory_a"]["id"], r["memory_b"]["id"])): r for r in rows(zm)}
    duplicate = by_pair[frozenset((old, new))]
    # A confident duplicate of two plain facts: the pass would have kept the newer and retired the older.
    assert duplicate["proposal"] == {"action": "invalidate", "winner": new, "loser": old, "reason": "duplicate"}
    contradiction = by_pair[frozenset((green, blue))]
    assert contradiction["proposal"] is None  # a contradiction is never resolved automatically

    listing = ok(zm("conflicts", "list")).stdout
    assert f"proposes: {new} stays, {old} retired (duplicate)" in listing

    refused = zm("conflicts", "resolve", contradiction["id"], "--accept")
    assert refused.exit_code == 1 and refused.stderr.startswith("validation_failed: accept:")
    accepted = ok(zm("conflicts", "resolve", duplicate["id"], "--accept", "--json")).json()
    assert accepted["resolution"]["winner"] == new and accepted["invalidated"] == [old]
    retired = ok(zm("get", old, "--json")).json()["memory"]
    assert (retired["status"], retired["superseded_by"], retired["invalidated_reason"]) == (
        "invalidated",
        new,
        "duplicate",
    )


def test_retro_offer_does_not_park_a_pair_a_judge_already_called_unrelated(
    judged: tuple[Zm, FakeOpenAIServer],
) -> None:
    zm, fake = judged
    short, long = remember(zm, TTL_SHORT), remember(zm, TTL_LONG)
    green, blue = remember(zm, "The staging queue is green"), remember(zm, "The staging queue is blue")
    scan = ok(zm("hygiene", "scan", "--json")).json()
    assert scan["judged"] >= 1 and scan["queued"] == 0  # the TTL pair judged unrelated; the queue pair failed

    asked = len(fake.requests)
    offered = ok(zm("hygiene", "retro", "--max", "10", "--offer", "--json")).json()
    assert len(fake.requests) == asked  # --offer runs no model
    parked = {frozenset((r["memory_a"]["id"], r["memory_b"]["id"])): r["verdict"] for r in rows(zm)}
    assert frozenset((short, long)) not in parked
    assert parked == {frozenset((green, blue)): "unjudged"}
    assert offered["queued"] == 1 and offered["skipped_cached"] >= 1
