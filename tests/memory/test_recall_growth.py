"""Recall while the vector index is being built: the same answers as once it is built."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.memory.helpers import write
from tests.store.test_clusters_build import Gate
from tests.store.writer import BUILDING
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.memory.recall import recall
from zero_memory.store.sqlite import vector_index as vector_index_module
from zero_memory.store.sqlite.adapter import SQLiteStore

TOPICS = ["deploys", "the database", "the login page", "billing", "search", "backups", "the mobile app", "logging"]
QUERIES = ["how do we deploy", "where are backups kept", "what breaks the login", "which database do we run"]


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    held = Gate(monkeypatch)
    yield held
    held.open()


def answers(app: App, caller: Caller) -> list[list[tuple[str, float]]]:
    return [[(h.id, h.score) for h in recall(app, caller, query, channel=None).hits] for query in QUERIES]


@pytest.mark.parametrize("matrix_rows", [0, 1_000_000], ids=["int8 rows", "float32 matrix"])
def test_recall_during_a_build_answers_what_it_answers_once_built(
    make_app: Callable[..., App],
    alice: Caller,
    tmp_path: Path,
    gate: Gate,
    matrix_rows: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(vector_index_module, "MATRIX_ROWS", matrix_rows)
    store = SQLiteStore.open(f"sqlite:///{tmp_path / 'zm.db'}", dim=512, **BUILDING)
    app = make_app(store=store)
    for n, topic in enumerate(TOPICS * 5):
        write(app, alice, f"Note {n} about {topic}: owned by team {n % 7}, reviewed every {n % 4 + 1} weeks")

    during = answers(app, alice)
    assert store.index.building and not store.index.uses_clusters
    gate.open()
    store.wait_for_index()
    assert store.index.uses_clusters and not store.index.building

    assert answers(app, alice) == during
    assert sum(len(hits) for hits in during) >= 10
