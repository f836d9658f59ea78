"""Recall embeds its query while PostgreSQL reads, and before the transaction on SQLite, answering alike.

On a store whose reads wait on a server (``Store.reads_in_server``) the query is embedded on a thread of
the app's while the transaction reads the full text; on SQLite, whose reads hold the GIL, on the caller's
thread before the transaction opens. Both orders must give the same hits with the same scores.
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np

from tests.memory.test_recall_equivalence import QUERIES, Clock, notes
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.embedding import Embedder
from zero_memory.memory.imports import import_path
from zero_memory.memory.recall import recall

MakeApp = Callable[..., App]


class Recorded:
    """The test's model, noting in ``events`` each embedding's thread beside the transactions opened."""

    def __init__(self, model: Embedder, events: list[tuple[str, str]]) -> None:
        self.model, self.events = model, events
        self.model_id, self.dim = model.model_id, model.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.events.append(("embed", threading.current_thread().name))
        return self.model.embed(texts)


def recorded_app(make_app: MakeApp, embedder: Embedder, backend: str, tmp_path: Path) -> tuple[App, list[Any]]:
    events: list[tuple[str, str]] = []
    clock = Clock()
    app = make_app(clock=clock, backend=backend, embedder=Recorded(embedder, events))
    path = tmp_path / "notes.jsonl"
    path.write_text("".join(json.dumps(note) + "\n" for note in notes(random.Random(5), 80)))
    assert import_path(app, Caller("alice", client="test"), path).imported == 80
    clock.now += timedelta(days=30)
    opened = app.store.tx

    @contextmanager
    def tx(**kwargs: Any) -> Iterator[Any]:
        events.append(("tx", threading.current_thread().name))
        with opened(**kwargs) as inner:
            yield inner

    app.store.tx = tx  # type: ignore[method-assign]
    events.clear()
    return app, events


def answers(app: App) -> list[list[tuple[str, float, bool, int | None]]]:
    alice = Caller("alice", client="test")
    return [
        [(h.id, h.score, h.disputed, h.stale_days) for h in recall(app, alice, q, scopes_arg=["*"], channel=None).hits]
        for q in [*QUERIES, "who changed the log level", "tenant limits after the outage", "note 17"]
    ]


def test_on_postgresql_the_query_is_embedded_beside_the_reads_and_answers_as_in_order(
    make_app: MakeApp, embedder: Embedder, tmp_path: Path
) -> None:
    app, events = recorded_app(make_app, embedder, "postgres", tmp_path)
    assert app.store.reads_in_server
    beside = answers(app)
    caller = threading.current_thread().name
    # The transaction opens on the caller's thread; the query is embedded on another one while it reads.
    assert events[:2] == [("tx", caller), ("embed", events[1][1])]
    assert events[1][1] != caller and events[1][1].startswith("zm-alongside")
    app.store.reads_in_server = False  # type: ignore[misc]  (the order SQLite keeps, on the same database)
    events.clear()
    in_order = answers(app)
    assert events[:2] == [("embed", caller), ("tx", caller)]
    assert beside == in_order
    assert all(beside), "every query must find something"


def test_on_sqlite_the_query_is_embedded_before_the_transaction_on_the_callers_thread(
    make_app: MakeApp, embedder: Embedder, tmp_path: Path
) -> None:
    app, events = recorded_app(make_app, embedder, "sqlite", tmp_path)
    assert not app.store.reads_in_server
    answers(app)
    caller = threading.current_thread().name
    recalls = [events[at : at + 2] for at, event in enumerate(events) if event[0] == "embed"]
    assert recalls and all(pair == [("embed", caller), ("tx", caller)] for pair in recalls)
