"""``zm recall`` (the real binary) ranks a statement that answers above the turns that only asked something.

The bundled model puts questions near questions: asked "which city did she visit?", a conversation's "How did
it go?" and "What was it like?" are nearer it than the turn that names the city. A memory that asks counts
half its similarity (docs/calibration.md, "Questions answer nothing"), on SQLite and PostgreSQL alike.
"""

from __future__ import annotations

from tests.cli.harness import Zm
from tests.cli.test_recall_words import hits, zm_on  # noqa: F401  (fixture)
from tests.pg import pg_server  # noqa: F401  (fixture)

TRIP = "Hana and I went to a trade fair in Tallinn together, it was exhausting but fun."
LESSONS = "My coworker Hana has been teaching me the guitar during lunch breaks."
# A conversation's turns as capture stores them: episodes, the answers among small talk that asks.
TURNS = [
    TRIP,
    LESSONS,
    "What was it like?",
    "How did it go?",
    "Did you end up going?",
    "Anyway, how is your family doing?",
    "How is Pepper settling in?",
    "The kids have a school play on Saturday!",
    "We tried a new pizza place downtown.",
    "I read an article about ancient Rome last night.",
    "Work has been hectic this week.",
    "Talk soon, take care!",
]


def test_a_turn_that_answers_ranks_above_the_turns_that_asked(zm_on: Zm) -> None:  # noqa: F811
    for text in TURNS:
        assert zm_on("remember", text, "--kind", "episode", "--scope", "personal").exit_code == 0
    assert hits(zm_on, "Which city did she visit?")[:1] == [TRIP]
    assert set(hits(zm_on, "Where did she travel with her coworker?")[:2]) == {TRIP, LESSONS}
