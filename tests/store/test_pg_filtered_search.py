"""PostgreSQL only: a filtered vector search returns exactly the rows the filters let through.

Through the HNSW index (an iterative scan keeps walking the graph until enough
rows pass the filters) and through the exact search below the bound alike; the
answer is checked against a brute-force ranking of the same rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

import numpy as np
import pytest

from tests.store.factories import DIM, AsSystem, add_users, memory, put, random_unit
from zero_memory.domain.memory import InvalidationReason, Status
from zero_memory.store.postgres.adapter import PostgresStore

SCOPES = ["proj.alice.api", "proj.alice.web", "user.alice", "proj.bob.api", "user.bob"]


@pytest.fixture(params=["hnsw", "exact"])
def searched(request: pytest.FixtureRequest, pg_url: str) -> Iterator[PostgresStore]:
    opened = PostgresStore.open(pg_url, dim=DIM, exact_search_rows=0 if request.param == "hnsw" else 100_000)
    # Acting as a system pass: the searches cross owners (row-level security is on).
    store = cast(PostgresStore, AsSystem(opened))
    rng = np.random.default_rng(7)
    with store.tx(write=True) as tx:
        add_users(tx, "alice", "bob")
        for n in range(900):
            scope = SCOPES[int(rng.integers(len(SCOPES)))]
            owner = scope.split(".")[1]
            gone = n % 7 == 0
            put(
                tx,
                memory(
                    f"row {n}",
                    owner=owner,
                    scope=scope,
                    minutes=n,
                    status=Status.INVALIDATED if gone else Status.LIVE,
                    reason=InvalidationReason.FORGOTTEN if gone else None,
                ),
                random_unit(n),
            )
    yield store
    store.close()


def expected(store: PostgresStore, query: np.ndarray, scopes: set[str] | None, owner: str | None) -> list[str]:
    """Every live row passing the filters, most similar first: the brute-force answer."""
    with store.tx() as tx:
        rows = tx._query("SELECT id, scope, owner, status FROM memories")
        vectors = tx.memory_vectors([r["id"] for r in rows])
    passing = [
        r["id"]
        for r in rows
        if r["status"] == "live" and (scopes is None or r["scope"] in scopes) and (owner is None or r["owner"] == owner)
    ]
    return sorted(passing, key=lambda i: (-float(vectors[i] @ query), i))


@pytest.mark.parametrize(
    ("scopes", "owner"),
    [({"proj.alice.api"}, None), ({"proj.alice.web", "user.alice"}, "alice"), (None, "bob"), ({"user.bob"}, None)],
)
def test_a_filtered_search_returns_exactly_the_rows_that_pass(
    searched: PostgresStore, scopes: set[str] | None, owner: str | None
) -> None:
    query = random_unit(5_000)
    truth = expected(searched, query, scopes, owner)
    with searched.tx() as tx:
        found = tx.similar(query, floor=-1.0, limit=len(truth) + 10, scopes=scopes, owner=owner)
        top = tx.similar(query, floor=-1.0, limit=10, scopes=scopes, owner=owner)
    assert [n.memory.id for n in found] == truth
    assert all((scopes is None or n.memory.scope in scopes) and n.memory.live for n in found)
    # The first ten of an approximate search may differ from the exact ones only in what is missing,
    # never in what is there: every hit passes the filters and is ranked by its true similarity.
    assert [n.memory.id for n in top] == [i for i in truth if i in {n.memory.id for n in top}]
    assert len(top) == 10
