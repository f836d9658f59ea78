"""Recall's rank and select step, alone: a pure function of the candidates, table-driven."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zero_memory.domain.memory import AuthorKind, Brief, Kind, Rank, age_days
from zero_memory.memory.recall import Candidate, asks, rank, relevance, score, standing

NOW = datetime(2026, 6, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Row:
    """A candidate in a table: its id, similarity, text score and what else its rank depends on."""

    id: str
    similarity: float = 0.5
    text: float = 0.0
    days: float = 0.0
    sessions: int = 0
    challenged: bool = False
    kind: Kind = Kind.FACT
    rank: Rank = Rank.AGENT

    def candidate(self) -> Candidate:
        brief = _brief(self.id, self.id, self.kind, self.rank, self.days)
        return Candidate(standing(brief, self.text, NOW), self.similarity, self.sessions, self.challenged)


CASES = [
    pytest.param([Row("a", 0.4), Row("b", 0.7), Row("c", 0.5)], 10, ["b", "c", "a"], id="by similarity"),
    pytest.param([Row("a", 0.4), Row("b", 0.7), Row("c", 0.5)], 2, ["b", "c"], id="the limit's best"),
    pytest.param([Row("a", 0.3, text=0.5), Row("b", 0.6)], 10, ["a", "b"], id="text adds 0.7 of its score"),
    pytest.param([Row("b", 0.5), Row("a", 0.5)], 10, ["a", "b"], id="equal scores in id order"),
    pytest.param([Row("old", 0.5, days=400), Row("new", 0.5)], 10, ["new", "old"], id="newer first at equal relevance"),
    pytest.param(
        [Row("old", 0.7, days=4000), Row("new", 0.5)], 10, ["old", "new"], id="age never overturns a margin above 0.15"
    ),
    pytest.param([Row("a", 0.5), Row("used", 0.5, sessions=20)], 10, ["used", "a"], id="use breaks a tie"),
    pytest.param(
        [Row("used", 0.5, sessions=20, challenged=True), Row("a", 0.45)],
        10,
        ["a", "used"],
        id="a challenged memory is demoted and not reinforced",
    ),
    pytest.param(
        [Row("p", 0.5, rank=Rank.PROVISIONAL), Row("q", 0.5)], 10, ["q", "p"], id="provisional below authoritative"
    ),
    pytest.param(
        [Row("task", 0.5, days=300, kind=Kind.TASK), Row("episode", 0.5, days=300, kind=Kind.EPISODE)],
        10,
        ["task", "episode"],
        id="an open loop does not decay",
    ),
    pytest.param([Row("a", -0.3), Row("b", 0.0)], 10, ["a", "b"], id="negative similarity counts as none"),
    pytest.param([], 10, [], id="nothing to rank"),
]


@pytest.mark.parametrize(("rows", "limit", "expected"), CASES)
def test_rank_orders_and_selects(rows: list[Row], limit: int, expected: list[str]) -> None:
    ranked = rank([r.candidate() for r in rows], limit)
    assert [brief.id for _, brief in ranked] == expected
    scores = [value for value, _ in ranked]
    assert scores == sorted(scores, reverse=True)


def _brief(memory_id: str, content: str, kind: Kind, rank: Rank, days: float) -> Brief:
    return Brief(
        id=memory_id,
        scope="user.alice",
        kind=kind,
        content=content,
        author_kind=AuthorKind.AGENT,
        agent_name="test",
        rank=rank,
        created_at=NOW - timedelta(days=days),
    )


@given(
    similarity=st.floats(-1.0, 1.0),
    text=st.floats(0.0, 1.0),
    days=st.floats(0.0, 5_000.0),
    sessions=st.integers(0, 200),
    challenged=st.booleans(),
    kind=st.sampled_from(list(Kind)),
    rank_=st.sampled_from(list(Rank)),
    question=st.booleans(),
)
def test_rank_scores_exactly_as_score_defines(
    similarity: float,
    text: float,
    days: float,
    sessions: int,
    challenged: bool,
    kind: Kind,
    rank_: Rank,
    question: bool,
) -> None:
    """The standing made before the query's vector comes, settled after it, is ``score`` of ``relevance`` to
    the last bit: the same sums in the same order, so recall ranks as the rule is written."""
    brief = _brief("m", "Was it this?" if question else "It was this.", kind, rank_, days)
    [(value, _)] = rank([Candidate(standing(brief, text, NOW), similarity, sessions, challenged)], 1)
    expected = score(
        relevance(similarity, text, asks(brief)), brief, age_days(brief.created_at, NOW), sessions, challenged
    )
    assert value == expected
