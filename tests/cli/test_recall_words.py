"""``zm recall`` (the real binary) finds words as people write them, on SQLite and PostgreSQL alike.

The three ways a memory's words count (docs/calibration.md, "The lexical rule"), each in a small store:

- a query finds the inflections of its words (the docs/clients.md example: "how do we deploy" and "Ops: deploys
  happen on Tuesdays and Thursdays"), ahead of memories nearer it by meaning that hold none of its words as
  written;
- a word no memory holds ("reschedule") keeps the common word found ("meeting") from standing for the whole
  question: the memory that answers it, in other words, comes before one that only shares "meeting";
- a memory that repeats the query's word ranks above one that says it once and is as near by meaning.

The rule itself, and each store's full text, are tested in tests/store/test_fulltext_rule.py.
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
# A dozen memories of a person's assistant. The one that answers "why did she reschedule the meeting" holds
# none of its words; "meeting" is held by one memory only, so in this store it looks as rare as a word can be.
RESCHEDULED = "Maya postponed the appointment with her manager to Thursday because her daughter had a fever"
MEETING_YOU = "Looking forward to meeting you both soon!"
HER_LIFE = [
    "Maya's sister is getting married in June in Lisbon",
    "Maya adopted a grey cat called Pepper last spring",
    "Maya runs a half marathon every October",
    "Maya gave up the keto diet after two weeks",
    "Maya's coworker Dana is leaving the company",
    "Maya is reading Night Freight by Carla Mendes",
    "Maya nearly quit her job at the bank in March",
    "Maya throws bowls on the pottery wheel every Sunday",
    "The weather has been lovely here",
    "Let's catch up again next week",
]
# The same note but for one word: the first says "retries" twice, the second once, and the model puts the
# second a little nearer "retries" (0.183 against 0.180): presence alone would rank it first.
RETRIES_TWICE = "Payment retries: the worker retries a failed charge three times"
RETRIES_ONCE = "Payment retries: the worker tries a failed charge again three times"
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


def test_a_word_no_memory_holds_keeps_a_common_word_from_standing_for_the_question(zm_on: Zm) -> None:
    remember(zm_on, RESCHEDULED, MEETING_YOU, *HER_LIFE)
    assert hits(zm_on, "why did she reschedule the meeting")[:1] == [RESCHEDULED]


def test_a_memory_that_repeats_the_query_s_word_ranks_above_one_that_says_it_once(zm_on: Zm) -> None:
    remember(zm_on, RETRIES_TWICE, RETRIES_ONCE, *OTHERS)
    assert hits(zm_on, "retries")[:2] == [RETRIES_TWICE, RETRIES_ONCE]
