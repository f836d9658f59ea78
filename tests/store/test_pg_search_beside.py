"""PostgreSQL: recall's vector search goes out as soon as the full text has read its rows, and is fetched
after; the answer is the one the search made after the full text gives, and nothing else may read the
transaction while the search is out."""

from __future__ import annotations

from typing import Any

import pytest

from tests.store.factories import add_users, memory, put, toward, visibility
from zero_memory import errors
from zero_memory.store.postgres.adapter import PostgresStore
from zero_memory.store.postgres.tx import PostgresTx

SCOPE = "proj.alice.api"
QUERY = "zebra service crossing"
READER = visibility("alice", SCOPE)


@pytest.fixture
def store(pg_store: PostgresStore) -> PostgresStore:
    with pg_store.tx(write=True) as tx:
        add_users(tx, "alice")
        for n in range(12):
            words = "the zebra service crossing" if n % 2 else "the service"
            put(tx, memory(f"{words} note {n}", scope=SCOPE), toward(0.5 + n / 30))
    return pg_store


def read(store: PostgresStore, *, text: bool, limit: int = 5) -> Any:
    """The vector side's briefs and similarities, and (``text``) the full text's briefs: the search sent when
    the text rows are read, or (no text read) made after ``beside``."""
    with store.tx() as tx:
        assert isinstance(tx, PostgresTx)
        search = tx.vector_search(floor=0.0, limit=limit, scopes={SCOPE})
        plan = tx.text_plan(QUERY)

        def beside() -> Any:
            return tx.text_briefs(plan, scopes={SCOPE}, limit=20, reader=READER) if text else {}

        neighbours, found = search.run(lambda: toward(0.9), beside)
        assert tx.get_user("alice") is not None  # the transaction reads again once the search is back
    return [(n.brief.id, round(n.similarity, 6)) for n in neighbours], sorted(found)


def test_the_search_sent_beside_the_text_rows_finds_what_the_search_after_them_finds(store: PostgresStore) -> None:
    sent_early, text = read(store, text=True)
    after, _ = read(store, text=False)
    assert sent_early == after
    assert len(sent_early) == 5 and len(text) == 12  # every note holds "service"


def test_a_search_with_nothing_to_find_is_not_sent(store: PostgresStore) -> None:
    assert read(store, text=True, limit=0)[0] == []


def test_reading_the_transaction_while_the_search_is_out_is_refused(store: PostgresStore) -> None:
    with store.tx() as tx:
        assert isinstance(tx, PostgresTx)
        search = tx.vector_search(floor=0.0, limit=5, scopes={SCOPE})
        plan = tx.text_plan(QUERY)

        def beside() -> Any:
            tx.text_briefs(plan, scopes={SCOPE}, limit=20, reader=READER)
            return tx.get_user("alice")  # after the text rows: the search is out

        with pytest.raises(errors.ZMError, match=r"^internal: the transaction was read while"):
            search.run(lambda: toward(0.9), beside)
    with store.tx() as tx:
        assert tx.get_user("alice") is not None
