"""Recall's queries embedded in a process of their own: the same vectors, one query at a time, and every way
it can fail leaves the caller to embed its own."""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import numpy as np
import pytest

from zero_memory import errors
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.domain.memory import Kind
from zero_memory.embedding import Embedder, query_process
from zero_memory.embedding.base import embed_queries
from zero_memory.embedding.hashing import HashingEmbedder
from zero_memory.embedding.query_process import QueryProcess
from zero_memory.mcp import server as mcp_server
from zero_memory.mcp.server import build_server
from zero_memory.memory import recall as recall_module
from zero_memory.memory.models import RememberRequest
from zero_memory.memory.recall import recall
from zero_memory.memory.write import remember
from zero_memory.server import warm
from zero_memory.store.sqlite import vectors as sqlite_vectors
from zero_memory.store.sqlite.vector_index import VectorIndex

WAIT_S = 60.0


def ready(process: QueryProcess) -> QueryProcess:
    deadline = time.monotonic() + WAIT_S
    while not process.ready:
        assert time.monotonic() < deadline, "the query process never said it was ready"
        time.sleep(0.01)
    return process


@pytest.fixture
def hashing(tmp_path: Path) -> Iterator[QueryProcess]:
    process = QueryProcess("hash:64", tmp_path / "cache", HashingEmbedder(64))
    process.start()
    yield process
    process.close()


def test_a_query_comes_back_as_the_embedder_here_makes_it(hashing: QueryProcess) -> None:
    ready(hashing)
    here = HashingEmbedder(64)
    for text in ("Deploys happen on Tuesdays.", "déploiement le mardi", "", "x" * 4000):
        asked = hashing.ask(text)
        assert asked is not None
        vector = asked.take()
        assert vector is not None and np.array_equal(vector, embed_queries(here, [text])[0])


def test_one_query_at_a_time_and_none_before_it_is_ready(tmp_path: Path) -> None:
    process = QueryProcess("hash:64", tmp_path / "cache", HashingEmbedder(64))
    try:
        assert process.ask("before the start") is None  # not started: the caller embeds
        process.start()
        ready(process)
        first = process.ask("first")
        assert first is not None
        assert process.ask("second, while the first is out") is None  # busy: the caller embeds its own
        assert first.take() is not None
        assert first.take() is None  # taken once
        again = process.ask("third")
        assert again is not None
        again.forget()  # a recall that failed before it needed the vector frees the process
        third = process.ask("third")
        assert third is not None and third.take() is not None
    finally:
        process.close()


@pytest.mark.parametrize(
    ("model", "warning"),
    [
        ("hash:32", "not the server's hash-64"),  # a model other than the server's (hash-64)
        ("no-such-model", "did not start"),  # a child that cannot build its model
    ],
)
def test_a_child_without_the_servers_model_is_never_asked(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, model: str, warning: str
) -> None:
    process = QueryProcess(model, tmp_path / "cache", HashingEmbedder(64))
    process.start()
    try:
        deadline = time.monotonic() + WAIT_S
        with caplog.at_level(logging.WARNING):
            while warning not in caplog.text:
                assert time.monotonic() < deadline
                assert process.ask("anything") is None
                time.sleep(0.01)
        assert not process.ready and process.ask("anything") is None
    finally:
        process.close()


def test_a_child_that_dies_leaves_the_caller_to_embed(hashing: QueryProcess) -> None:
    ready(hashing)
    child = hashing._process
    assert child is not None
    asked = hashing.ask("asked of a child about to die")
    assert asked is not None and asked.take() is not None
    child.kill()
    child.wait()
    asked = hashing.ask("asked of a dead child")  # the pipe may still take it: the answer never comes
    assert asked is None or asked.take() is None
    assert hashing.ask("and after") is None and not hashing.ready


def test_a_child_that_does_not_answer_is_stopped_and_the_caller_embeds(
    hashing: QueryProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    ready(hashing)
    child = hashing._process
    assert child is not None
    monkeypatch.setattr(query_process, "TAKE_TIMEOUT_S", 0.2)
    os.kill(child.pid, signal.SIGSTOP)  # stuck
    asked = hashing.ask("asked of a stuck child")
    assert asked is not None and asked.take() is None
    assert child.poll() is not None  # stopped for good, not left behind
    assert hashing.ask("and after") is None and not hashing.ready


def test_an_answer_slower_than_the_spin_is_waited_for_asleep(
    hashing: QueryProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The caller looks for the vector without sleeping for ``SPIN_S``; a child slower than that (here held
    stopped for a tenth of a second) is then waited for asleep, and its vector taken, not given up on."""
    ready(hashing)
    child = hashing._process
    assert child is not None
    monkeypatch.setattr(query_process, "SPIN_S", 0.02)
    os.kill(child.pid, signal.SIGSTOP)
    resume = threading.Timer(0.1, os.kill, (child.pid, signal.SIGCONT))
    began = time.monotonic()
    resume.start()
    try:
        asked = hashing.ask("asked of a slow child")
        assert asked is not None
        vector = asked.take()
    finally:
        resume.join()
    assert time.monotonic() - began >= 0.1
    assert vector is not None and np.array_equal(
        vector, embed_queries(HashingEmbedder(64), ["asked of a slow child"])[0]
    )
    assert hashing.ready  # still asked next time


def test_close_stops_the_child(hashing: QueryProcess) -> None:
    ready(hashing)
    child = hashing._process
    assert child is not None
    hashing.close()
    assert child.poll() is not None
    assert hashing.ask("after the close") is None
    hashing.start()  # closed for good
    assert hashing._process is None


@pytest.fixture
def served(make_app: Callable[..., App], embedder: Embedder) -> Iterator[App]:
    """An app on the real model with memories, its query process started by the server's warm-up step."""
    app = make_app({"ZM_QUERY_PROCESS": "1"})
    for text in (
        "Deploys happen on Tuesdays after the standup.",
        "The api's health check is /healthz.",
        "Never run the migrations by hand on production; use zm db migrate.",
        "The billing service retries webhooks three times.",
    ):
        remember(app, Caller("alice"), RememberRequest(content=text, kind=Kind.FACT, scope="personal"))
    warm.start_query_process(app)
    assert app.query_process is not None
    ready(app.query_process)
    yield app


def test_recall_answers_alike_with_the_query_process_and_without(served: App, alice: Caller) -> None:
    process = served.query_process
    assert process is not None
    queries = ["when do we deploy", "health endpoint", "how to migrate the database", "webhook retries"]
    taken: list[np.ndarray | None] = []
    spins: list[bool] = []
    take = process._take
    process._take = lambda spin: spins.append(spin) or taken.append(take(spin)) or taken[-1]  # type: ignore[method-assign]
    with_process = [recall(served, alice, q, channel=None).hits for q in queries]
    assert len(taken) == len(queries) and all(v is not None for v in taken)  # each embedded by the process
    assert all(spins)  # a small index: the full text read before the vector is wanted, nothing else waits
    served.query_process = None
    without = [recall(served, alice, q, channel=None).hits for q in queries]
    served.query_process = process
    assert [[h.id for h in hits] for hits in with_process] == [[h.id for h in hits] for hits in without]
    assert with_process[0][0].content.startswith("Deploys happen")
    asked = process.ask("free after every recall")
    assert asked is not None
    asked.forget()


def test_the_vector_is_waited_for_asleep_while_the_full_text_is_read_beside_the_scan(
    served: App, alice: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large index reads the full text on another thread while it scans: a recall waiting for the query's
    vector meanwhile does not spin for it (each look would take the interpreter lock from that thread). A
    small index reads it first, and spins."""
    process = served.query_process
    assert process is not None
    spins: list[bool] = []
    taking = threading.Event()
    take = process._take
    process._take = lambda spin: spins.append(spin) or taking.set() or take(spin)  # type: ignore[method-assign]
    alone = recall(served, alice, "when do we deploy", channel=None).hits
    monkeypatch.setattr(sqlite_vectors, "BESIDE_MIN_ROWS", 0)
    monkeypatch.setattr(VectorIndex, "uses_clusters", property(lambda index: True))  # the large index's way
    text_side = recall_module._text_side

    def held(*args: object) -> object:
        # The full text still being read when the vector is taken (a thread started late could otherwise
        # have read it all first, and the recall rightly spun).
        assert taking.wait(WAIT_S)
        return text_side(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(recall_module, "_text_side", held)
    taking.clear()
    beside = recall(served, alice, "when do we deploy", channel=None).hits
    assert spins == [True, False]
    assert [h.id for h in beside] == [h.id for h in alone]


def test_a_recall_that_fails_frees_the_query_process(served: App, alice: Caller) -> None:
    with pytest.raises(errors.ZMError):
        recall(served, alice, "when do we deploy", scopes_arg=["project:no-such-project"])
    process = served.query_process
    assert process is not None
    asked = process.ask("free again")
    assert asked is not None and asked.take() is not None


def test_the_warm_up_step_starts_no_process_when_it_would_not_pay(
    make_app: Callable[..., App], embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    off = make_app({"ZM_QUERY_PROCESS": "0"})
    warm.start_query_process(off)
    assert off.query_process is None
    one_core = make_app({"ZM_QUERY_PROCESS": "1"})
    with monkeypatch.context() as patched:
        patched.setattr(warm.os, "sched_getaffinity", lambda pid: {0})  # a container given one core
        warm.start_query_process(one_core)
    assert one_core.query_process is None
    monkeypatch.setattr(warm.os, "sched_getaffinity", lambda pid: {0, 1})
    warm.start_query_process(one_core)  # the same app given two
    assert one_core.query_process is not None
    quick = make_app({"ZM_QUERY_PROCESS": "1", "ZM_EMBEDDING_MODEL": "hash:512"}, embedder=HashingEmbedder(512))
    warm.start_query_process(quick)  # a hashing embedder embeds a query in microseconds
    assert quick.query_process is None


def test_the_app_closes_its_query_process(make_app: Callable[..., App], embedder: Embedder) -> None:
    app = make_app({"ZM_QUERY_PROCESS": "1"})
    warm.start_query_process(app)
    process = app.query_process
    assert process is not None and process._process is not None
    pid = process._process.pid
    app.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_recall_with_other_calls_in_flight_embeds_its_own(served: App, alice: Caller) -> None:
    """Other calls in flight keep the cores busy: the hand-off would cost more than it frees."""
    process = served.query_process
    assert process is not None
    taken: list[np.ndarray | None] = []
    take = process._take
    process._take = lambda spin: taken.append(take(spin)) or taken[-1]  # type: ignore[method-assign]
    served.calls_in_flight = 2  # this call and another
    busy = recall(served, alice, "when do we deploy", channel=None).hits
    assert taken == []
    served.calls_in_flight = 1  # this call alone
    alone = recall(served, alice, "when do we deploy", channel=None).hits
    assert len(taken) == 1 and [h.id for h in busy] == [h.id for h in alone]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_mcp_server_counts_the_calls_in_flight(app: App, monkeypatch: pytest.MonkeyPatch) -> None:
    server = build_server(app)
    seen: list[int] = []

    async def answering(*args: object, **kwargs: object) -> str:
        seen.append(app.calls_in_flight)
        await anyio.sleep(0.05)  # the other call starts meanwhile
        if len(seen) == 2:
            raise RuntimeError("a call that fails")
        return "answered"

    monkeypatch.setattr(mcp_server, "invoke", answering)

    with pytest.raises(ExceptionGroup):
        async with anyio.create_task_group() as group:
            group.start_soon(server.call_tool, "recall", {"query": "a"})
            group.start_soon(server.call_tool, "recall", {"query": "b"})
    assert seen == [1, 2] and app.calls_in_flight == 0  # counted while answering, and after a failure too
