"""A server loads at its start what its first call would wait for: the model, the secret guard, the vector index."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import numpy as np
import pytest
from starlette.testclient import TestClient

from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.bootstrap import build_app
from zero_memory.domain.memory import Kind
from zero_memory.embedding import Embedder
from zero_memory.mcp.identity import Identity
from zero_memory.mcp.server import build_server
from zero_memory.memory.models import RememberRequest
from zero_memory.memory.recall import recall
from zero_memory.memory.write import remember
from zero_memory.server import warm
from zero_memory.server.app import create_app
from zero_memory.server.services import STDIO, Services, running
from zero_memory.server.stdio import Backend
from zero_memory.store.sqlite.adapter import SQLiteStore

WAIT_S = 60.0


class Noting:
    """The real model, noting each batch it is asked to embed; ``gate`` (when given) holds every call until set,
    and ``failures`` calls fail first."""

    def __init__(self, model: Embedder, *, gate: threading.Event | None = None, failures: int = 0) -> None:
        self.model = model
        self.model_id, self.dim = model.model_id, model.dim
        self.asked: list[list[str]] = []
        self.gate = gate
        self.failures = failures

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.asked.append(list(texts))
        if self.gate is not None:
            assert self.gate.wait(WAIT_S)
        if self.failures:
            self.failures -= 1
            raise RuntimeError("the model's files are unreadable")
        return self.model.embed(texts)


@contextmanager
def stored(make_app: Callable[..., App], embedder: Noting) -> Iterator[App]:
    """An app on a store that holds memories, opened anew: nothing of it loaded yet."""
    first = make_app(embedder=embedder.model)
    for text in ("Deploys happen on Tuesdays.", "The api's health check is /healthz."):
        remember(first, Caller("alice"), RememberRequest(content=text, kind=Kind.FACT, scope="personal"))
    first.close()
    app = build_app(first.settings, embedder=embedder)
    try:
        yield app
    finally:
        app.close()


def index_loaded(app: App) -> bool:
    assert isinstance(app.store, SQLiteStore)
    return app.store.index.loaded


def test_a_server_loads_the_model_the_guard_and_the_index_before_any_call(
    make_app: Callable[..., App], embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked: list[str] = []
    monkeypatch.setattr(warm, "find_secret", lambda text: checked.append(text))
    noting = Noting(embedder)
    with stored(make_app, noting) as app, running(app, STDIO) as started:
        assert started.warm is not None
        assert started.warm.warm.wait(WAIT_S)
        assert noting.asked == [[warm.WARM_TEXT]]
        assert checked == [warm.WARM_TEXT]
        assert isinstance(app.store, SQLiteStore) and app.store.index.loaded and app.store.index.indexed == 2
        assert set(started.warm.seconds) == {"embedding model", "secret guard", "vector index"}
        # The first call finds everything loaded: its own query is all the model is asked.
        hits = recall(app, Caller("alice"), "when do we deploy", channel=None).hits
        assert hits[0].content == "Deploys happen on Tuesdays."
        assert noting.asked == [[warm.WARM_TEXT], ["when do we deploy"]]


def test_a_process_that_does_not_warm_up_loads_at_its_first_call(
    make_app: Callable[..., App], embedder: Embedder
) -> None:
    noting = Noting(embedder)
    with stored(make_app, noting) as app, running(app, Services(capture=True)) as started:
        assert started.warm is None
        time.sleep(0.2)
        assert not noting.asked and not index_loaded(app)
        hits = recall(app, Caller("alice"), "when do we deploy", channel=None).hits
        assert noting.asked == [["when do we deploy"]] and index_loaded(app)
        assert hits[0].content == "Deploys happen on Tuesdays."


def test_a_step_that_fails_is_left_to_the_first_call_and_the_others_still_load(
    make_app: Callable[..., App], embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    noting = Noting(embedder, failures=1)
    with stored(make_app, noting) as app, running(app, STDIO) as started:
        assert started.warm is not None
        deadline = time.monotonic() + WAIT_S
        while "vector index" not in started.warm.seconds and time.monotonic() < deadline:
            time.sleep(0.01)
        assert started.warm.failed == ["embedding model"]
        assert not started.warm.warm.is_set()
        assert index_loaded(app)
        assert "warm-up: loading the embedding model failed" in caplog.text
        hits = recall(app, Caller("alice"), "when do we deploy", channel=None).hits
        assert hits[0].content == "Deploys happen on Tuesdays."


def test_stopping_waits_for_the_step_running_and_starts_no_other(app: App) -> None:
    began, release = threading.Event(), threading.Event()
    ran: list[str] = []

    def slow(_: App) -> None:
        began.set()
        assert release.wait(WAIT_S)
        ran.append("slow")

    warm_up = warm.WarmUp(app, (("slow", slow), ("next", lambda _: ran.append("next"))))
    warm_up.start()
    assert began.wait(WAIT_S)
    stopping = threading.Thread(target=warm_up.stop)
    stopping.start()
    stopping.join(0.2)
    assert stopping.is_alive()  # waits for the step that is loading
    release.set()
    stopping.join(WAIT_S)
    assert ran == ["slow"]
    assert not warm_up.warm.is_set()


def test_healthz_says_whether_the_process_is_warm(make_app: Callable[..., App], embedder: Embedder) -> None:
    gate = threading.Event()
    noting = Noting(embedder, gate=gate)
    app = make_app(embedder=noting)
    with TestClient(create_app(app, dashboard=False)) as client:
        answer = client.get("/healthz").json()
        assert answer["status"] == "ok" and answer["warm"] is False
        gate.set()
        deadline = time.monotonic() + WAIT_S
        while not client.get("/healthz").json()["warm"] and time.monotonic() < deadline:
            time.sleep(0.02)
        assert client.get("/healthz").json()["warm"] is True
        assert noting.asked[0] == [warm.WARM_TEXT]


def test_zm_mcp_warms_up_once_started_before_any_message(make_app: Callable[..., App], embedder: Embedder) -> None:
    noting = Noting(embedder)
    with stored(make_app, noting) as app:
        backend = Backend(app, build_server(app, Identity(local_uid="alice")))
        assert not index_loaded(app) and not noting.asked
        backend.start()
        try:
            deadline = time.monotonic() + WAIT_S
            while not index_loaded(app) and time.monotonic() < deadline:
                time.sleep(0.01)
            assert noting.asked == [[warm.WARM_TEXT]] and index_loaded(app)
        finally:
            backend.close()


def test_a_server_catches_up_what_another_process_writes_without_a_call(
    make_app: Callable[..., App], embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(warm, "FOLLOW_INTERVAL_S", 0.05)
    noting = Noting(embedder)
    with stored(make_app, noting) as app, running(app, STDIO) as started:
        assert started.warm is not None and started.warm.warm.wait(WAIT_S)
        assert isinstance(app.store, SQLiteStore) and app.store.index.indexed == 2
        searched = noting.asked[:]
        # Another process imports (an app of its own on the same data directory).
        other = build_app(app.settings, embedder=embedder)
        try:
            for n in range(5):
                remember(
                    other,
                    Caller("alice"),
                    RememberRequest(content=f"Import note {n}.", kind=Kind.FACT, scope="personal"),
                )
        finally:
            other.close()
        deadline = time.monotonic() + WAIT_S
        while app.store.index.indexed < 7 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert app.store.index.indexed == 7
        assert noting.asked == searched  # no call, no search: the follower read them
        hits = recall(app, Caller("alice"), "import note", channel=None, limit=10).hits
        assert {hit.content for hit in hits} >= {f"Import note {n}." for n in range(5)}
