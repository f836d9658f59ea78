"""Raising a user's extraction allowance takes effect at once: a chunk waiting for it is extracted right after.

Everything runs as an operator and a user run it: the installed ``zm`` as a
subprocess (and ``zm serve``, whose worker takes up due chunks), with a fake
OpenAI-compatible server on 127.0.0.1 as the extraction model. A chunk comes
to wait for the allowance when its first attempt fails (the model answers 500)
and the allowance is spent before the retry: the retry then puts it off until
the next UTC midnight.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.harness import Result, Zm, environ
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.server import RecordedRequest, Reply
from tests.mcp.helpers import start_server, stop_server

RETRY_S = 0.3
WAIT_S = 30
SHIP = "The api deploys with `make ship` from the root."
Run = Callable[..., Result]


class Model(FakeOpenAIServer):
    """An extraction model that answers 500 while ``down``, then finds one convention in each chunk."""

    down = True

    def answer(self, request: RecordedRequest) -> Reply:
        if self.down:
            return Reply.json({"error": {"message": "overloaded", "type": "server_error"}}, status=500)
        return FakeOpenAIServer.statements([{"content": SHIP, "kind": "convention", "scope_hint": "project"}])


@pytest.fixture
def model() -> Iterator[Model]:
    with Model() as server:
        server.respond_with(server.answer)
        yield server


@pytest.fixture
def env(zm: Zm, model: Model) -> dict[str, str]:
    return {
        **zm.env,
        "ZM_USER": "alice",
        "ZM_JUDGE_PROVIDER": "openai",
        "ZM_JUDGE_BASE_URL": model.base_url,
        "ZM_JUDGE_API_KEY": "sk-test-key-for-the-fake",
        "ZM_EXTRACT_MODEL": "extractor",
        "ZM_JUDGE_TIMEOUT_S": "10",
        "ZM_EXTRACT_RETRY_SECONDS": str(RETRY_S),
    }


@pytest.fixture
def run(zm: Zm, env: dict[str, str]) -> Run:
    def call(*args: str) -> Result:
        return zm(*args, env=env, binary=True)

    assert call("user", "add", "alice").exit_code == 0
    return call


def the_chunk(run: Run) -> dict[str, Any]:
    listed = run("capture", "list", "--json")
    assert listed.exit_code == 0, listed.stderr
    [chunk] = listed.json()
    return chunk  # type: ignore[no-any-return]


def until(read: Callable[[], dict[str, Any]], done: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    deadline = time.monotonic() + WAIT_S
    value = read()
    while not done(value) and time.monotonic() < deadline:
        time.sleep(0.2)
        value = read()
    return value


def waiting_for_the_allowance(run: Run, model: Model, tmp_path: Path) -> Path:
    """A conversation whose one chunk waits for alice's allowance, spent to 0 by ``zm user budget set 0``;
    the model is back up."""
    talk = tmp_path / "talk.txt"
    talk.write_text("user: how do we deploy?\n\nassistant: make ship, from the root.\n", encoding="utf-8")
    first = run("ingest", str(talk), "--project", str(tmp_path / "api"))
    assert first.exit_code == 0, first.stderr
    assert the_chunk(run)["status"] == "pending"  # the model failed: a retry is due in RETRY_S
    assert run("user", "budget", "set", "0").exit_code == 0

    def drained() -> dict[str, Any]:
        assert run("capture", "drain").exit_code == 0
        return the_chunk(run)

    chunk = until(drained, lambda c: (c["last_error"] or "").startswith("budget_exhausted:"))
    assert chunk["status"] == "pending" and chunk["attempts"] == 1, chunk
    model.down = False
    return talk


def test_the_servers_worker_extracts_a_waiting_chunk_right_after_the_allowance_is_raised(
    run: Run, env: dict[str, str], model: Model, tmp_path: Path
) -> None:
    waiting_for_the_allowance(run, model, tmp_path)
    server, _ = start_server(environ(env), tmp_path / "serve.log")
    try:
        asked = len(model.requests)
        time.sleep(5 * RETRY_S)  # the worker's passes find nothing due while the allowance is spent
        assert the_chunk(run)["status"] == "pending" and len(model.requests) == asked

        raised = run("user", "budget", "set", "50000")
        assert raised.exit_code == 0, raised.stderr
        chunk = until(lambda: the_chunk(run), lambda c: c["status"] == "done")
    finally:
        stop_server(server)
    assert (chunk["status"], chunk["created"], chunk["last_error"]) == ("done", 1, None)
    assert len(model.requests) == asked + 1  # one call, after the raise


def test_sending_a_waiting_chunk_again_after_a_raise_answers_duplicate_and_extracts_it(
    run: Run, model: Model, tmp_path: Path
) -> None:
    talk = waiting_for_the_allowance(run, model, tmp_path)
    asked = len(model.requests)
    assert run("user", "budget", "set", "50000").exit_code == 0
    again = run("ingest", str(talk), "--project", str(tmp_path / "api"), "--json")
    assert again.exit_code == 0, again.stderr
    answer = again.json()
    assert [c["status"] for c in answer["chunks"]] == ["duplicate"]
    assert (answer["extraction"][0]["status"], answer["extraction"][0]["created"]) == ("done", 1)
    assert len(model.requests) == asked + 1  # one call, after the raise
