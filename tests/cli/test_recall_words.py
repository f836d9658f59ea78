"""``zm recall`` (the real binary) finds words as people write them, on SQLite and PostgreSQL alike.

A query finds the inflections of its words (the docs/clients.md example: "how do we deploy" and "Ops: deploys
happen on Tuesdays and Thursdays"), ahead of memories nearer it by meaning that hold none of its words as
written. Term frequency and words no memory holds are tested on the rule and on both stores'
full text (tests/store/test_fulltext_rule.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.harness import Zm
from tests.pg import PgServer, pg_server  # noqa: F401  (fixture)

DEPLOYS = "Ops: deploys happen on Tuesdays and Thursdays"  # the example of docs/clients.md
WRITES = "The billing worker writes every invoice to the ledger before noon"
# Nearer the queries by meaning than the memories that answer them, and holding none of their words as written
# but for one: without the inflections they come first.
NEAR = [
    "How do we roll back a bad release?",
    "We ship from the main branch only",
    "Who owns the invoices service? Ask Dana",
    "Invoices are stored for seven years",
]
OTHERS = [
    "The staging database is backed up every night at 02:00 UTC",
    "Use ruff for linting, not flake8",
    "The API gateway times out after 30 seconds",
    "Release notes live in docs/changelog.md",
]


@pytest.fixture(params=["sqlite", "postgres"])
def zm_on(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Zm]:
    """``zm`` on a fresh store of each kind: writes in process (quicker), ``recall`` as the real binary."""
    env = {"ZM_HOME": str(tmp_path / "home"), "COLUMNS": "200"}
    if request.param == "sqlite":
        yield Zm(env)
        return
    server: PgServer = request.getfixturevalue("pg_server")
    url = server.fresh_url()
    yield Zm({**env, "ZM_DATABASE_URL": url})
    server.drop(url)


def remember(zm: Zm, *texts: str) -> None:
    for text in texts:
        assert zm("remember", text, "--kind", "fact", "--scope", "personal").exit_code == 0


def hits(zm: Zm, query: str) -> list[str]:
    found = zm("recall", query, "--scope", "personal", "--json", binary=True)
    assert found.exit_code == 0, found.stderr
    return [h["content"] for h in found.json()["hits"]]


def test_a_query_finds_the_inflections_of_its_words(zm_on: Zm) -> None:
    remember(zm_on, DEPLOYS, WRITES, *NEAR, *OTHERS)
    assert hits(zm_on, "how do we deploy")[:1] == [DEPLOYS]
    assert hits(zm_on, "deploy deploy deploy")[:1] == [DEPLOYS]  # a word repeated in the query counts once
    assert hits(zm_on, "who write invoices")[:1] == [WRITES]
