"""A remember's one search of the writer's nearest memories answers each question as its own search would
(memory/nearby.py): checked against the questions asked of the whole ranking, and on a real store where
the search cannot answer dedup and the question is searched on its own."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from tests.memory.helpers import write
from tests.store.factories import memory
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.memory.nearby import Neighbourhood, Question, answer
from zero_memory.store.ports.search import Neighbour

SCOPES = ("user.alice", "proj.alice.a", "proj.alice.b")


def neighbour(n: int, similarity: float, scope: str) -> Neighbour:
    return Neighbour(memory(f"memory {n}", id=f"mem_{n:03d}", scope=scope), similarity)


def ranking(similarities: list[float], scopes: list[int]) -> list[Neighbour]:
    """The owner's memories by similarity, most similar first, equal ones in id order (as ``Tx.similar``)."""
    everyone = [neighbour(n, s, SCOPES[scopes[n % len(scopes)]]) for n, s in enumerate(similarities)]
    return sorted(everyone, key=lambda m: (-m.similarity, m.memory.id))


def asked_alone(question: Question, everyone: list[Neighbour]) -> list[Neighbour]:
    return [n for n in everyone if n.similarity >= question.floor and question.keeps(n)][: question.count]


similarity = st.sampled_from([0.3, 0.46, 0.5, 0.7, 0.89, 0.9, 0.96, 0.97, 1.0])


@given(
    similarities=st.lists(similarity, max_size=40),
    scopes=st.lists(st.integers(0, 2), min_size=1, max_size=5),
    search_floor=st.sampled_from([0.3, 0.46, 0.5]),
    limit=st.integers(1, 25),
    floor=similarity,
    count=st.integers(1, 12),
    scope=st.sampled_from([None, *SCOPES]),
    excluded=st.sets(st.integers(0, 39), max_size=6),
)
def test_an_answer_from_the_search_is_the_questions_own(
    similarities: list[float],
    scopes: list[int],
    search_floor: float,
    limit: int,
    floor: float,
    count: int,
    scope: str | None,
    excluded: set[int],
) -> None:
    everyone = ranking(similarities, scopes)
    searched = [n for n in everyone if n.similarity >= search_floor][:limit]
    question = Question(max(floor, search_floor), count, scope, frozenset(f"mem_{n:03d}" for n in excluded))
    found = answer(question, searched, limit)
    expected = asked_alone(question, everyone)
    if found is None:
        # Only a full list still above the floor may leave the answer open, and then it truly may be past it.
        assert len(searched) == limit and searched[-1].similarity >= question.floor
        assert len(asked_alone(question, searched)) < question.count
    else:
        assert found == expected
    if len(searched) < limit:
        assert found == expected  # the whole ranking above the search's floor was read


class RecordingTx:
    """``Tx.similar`` over a fixed ranking, each call recorded."""

    def __init__(self, everyone: list[Neighbour]) -> None:
        self.everyone, self.calls = everyone, list[dict[str, object]]()

    def similar(
        self,
        vector: np.ndarray,
        *,
        floor: float,
        limit: int,
        owner: str,
        scopes: list[str] | None = None,
        exclude: frozenset[str] = frozenset(),
    ) -> list[Neighbour]:
        self.calls.append({"floor": floor, "limit": limit, "scopes": scopes, "owner": owner, "exclude": exclude})
        kept = [n for n in self.everyone if n.similarity >= floor and (scopes is None or n.memory.scope in scopes)]
        return [n for n in kept if n.memory.id not in exclude][:limit]


def test_the_questions_share_one_search_and_one_it_cannot_answer_is_searched_alone() -> None:
    # Six near-twins in a project, then the one in the writer's scope: a search of five holds only the twins.
    everyone = ranking([1.0] * 6 + [0.95, 0.6, 0.5], [1, 1, 1, 1, 1, 1, 0, 0, 0])
    tx = RecordingTx(everyone)
    near = Neighbourhood(tx, lambda: np.zeros(3, dtype=np.float32), "alice", 0.46, 5)  # type: ignore[arg-type]

    assert near.ask(Question(0.96, 5)) == everyone[:5]
    assert near.ask(Question(0.46, 3, exclude=frozenset({"mem_000"}))) == everyone[1:4]
    assert len(tx.calls) == 1, "answered from the one search"

    dedup = near.ask(Question(0.89, 1, scope="user.alice"))
    assert [n.memory.id for n in dedup] == ["mem_006"]
    searched_alone = {"floor": 0.89, "limit": 1, "scopes": ["user.alice"], "owner": "alice", "exclude": frozenset()}
    assert tx.calls[1] == searched_alone


def test_a_twin_past_the_search_in_the_writers_scope_still_absorbs_the_write(app: App, alice: Caller) -> None:
    """The search holds the writer's most similar memories: when all of them are exact copies in other
    projects, the near-twin in the write's own scope is found by the dedup question's own search."""
    text = "The deploy script lives in scripts/deploy.sh"
    search_limit = app.settings.hygiene.similar_existing_limit + 10
    for n in range(search_limit):
        copy = write(app, alice, text, provisional=True, project_hint=f"service-{n}")
        assert copy.status == "created"
    kept = write(app, alice, text + ".")  # authoritative, in personal: above the provisional copies
    assert kept.status == "created" and kept.scope == "user.alice"

    again = write(app, alice, text, provisional=True)
    assert again.status == "absorbed"
    assert again.id == kept.id
