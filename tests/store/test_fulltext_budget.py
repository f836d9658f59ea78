"""SQLite only: on a large corpus, full text ranks only the query's rare words."""

from __future__ import annotations

import pytest

from tests.store.factories import add_users, memory, put
from zero_memory.store import Store
from zero_memory.store import sqlite as sqlite_store_module
from zero_memory.store.base import SYSTEM


@pytest.fixture
def large(sqlite_store: Store, monkeypatch: pytest.MonkeyPatch) -> Store:
    """A corpus 'large' for the thresholds: 30 memories, 'service' in every one of them."""
    monkeypatch.setattr(sqlite_store_module, "SELECTIVE_SEARCH_ROWS", 10)
    monkeypatch.setattr(sqlite_store_module, "POSTINGS_BUDGET", 3)
    with sqlite_store.tx(write=True) as tx:
        add_users(tx, "alice")
        for n in range(29):
            put(tx, memory(f"The service number {n} restarts nightly", minutes=n))
        put(tx, memory("The service fails with error E4711 when the licence expired", minutes=30))
    return sqlite_store


def search(store: Store, query: str) -> list[str]:
    with store.tx() as tx:
        found = tx.fulltext(query, scopes=["proj.alice.api"], limit=10)
        return [m.content for m in tx.get_memories(found, SYSTEM).values()]


def test_a_rare_identifier_is_found_beside_a_word_every_memory_has(large: Store) -> None:
    assert search(large, "service E4711") == ["The service fails with error E4711 when the licence expired"]


def test_a_query_of_common_words_only_leaves_ranking_to_the_vector_side(large: Store) -> None:
    assert search(large, "service restarts") == []
