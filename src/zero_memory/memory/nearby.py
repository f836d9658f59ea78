"""A remember's neighbourhood: the writer's memories nearest its text, searched once under the write lock.

A remember asks the same ranking (the owner's live memories by similarity to
the new text, most similar first, equal ones in id order) three questions,
each a floor, a count and a filter: the authority cascade (the provisional
yield probe, 10 above ``provisional_yield_similarity``; same-scope dedup, the
first of the scope above ``dedup_similarity``), same-session refinement (5
above ``same_session_similarity``) and the ``similar_existing`` advice
(``similar_existing_limit`` + 10 above its floor, the retired ones left out).
One search with the lowest floor and the largest count answers each of them
as its own search would, unless the answer may lie past the search's end:
its list was full and still above the question's floor with too few kept.
Only then is the question searched on its own (many near-twins in other
scopes, or the retired ones filling the list).

Asked separately, the three cost a remember three searches and a read
transaction after the commit for the advice (measured under eight clients:
the advice alone ~1.35 ms of a remember's ~5 ms of server CPU).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from zero_memory.store.base import Tx
from zero_memory.store.ports.search import Neighbour


@dataclass(frozen=True, slots=True)
class Question:
    """The first ``count`` memories at or above ``floor``, of ``scope`` (any when None), none of ``exclude``."""

    floor: float
    count: int
    scope: str | None = None
    exclude: frozenset[str] = frozenset()

    def keeps(self, neighbour: Neighbour) -> bool:
        memory = neighbour.memory
        return (self.scope is None or memory.scope == self.scope) and memory.id not in self.exclude


def answer(question: Question, searched: list[Neighbour], limit: int) -> list[Neighbour] | None:
    """``question``'s answer from ``searched`` (a search's result, asked for at most ``limit``, most similar
    first, at a floor no higher than the question's), or None when it may hold memories past the list's end.

    A memory the search did not return is no more similar than its last: once the list falls below the
    question's floor, or when it is not full, nothing above the floor is missing."""
    found: list[Neighbour] = []
    for neighbour in searched:
        if neighbour.similarity < question.floor:
            return found
        if question.keeps(neighbour):
            found.append(neighbour)
            if len(found) == question.count:
                return found
    return found if len(searched) < limit else None


class Neighbourhood:
    """The owner's memories nearest ``vector()``: one search down to ``floor``, ``limit`` of them, made when a
    question is first asked; a question it cannot answer is searched on its own."""

    def __init__(self, tx: Tx, vector: Callable[[], np.ndarray], owner: str, floor: float, limit: int) -> None:
        self._tx, self._vector, self._owner = tx, vector, owner
        self._floor, self._limit = floor, limit

    @cached_property
    def _searched(self) -> list[Neighbour]:
        return self._tx.similar(self._vector(), floor=self._floor, limit=self._limit, owner=self._owner)

    def ask(self, question: Question) -> list[Neighbour]:
        if question.floor >= self._floor:
            found = answer(question, self._searched, self._limit)
            if found is not None:
                return found
        scopes: Collection[str] | None = None if question.scope is None else [question.scope]
        return self._tx.similar(
            self._vector(),
            floor=question.floor,
            limit=question.count,
            scopes=scopes,
            owner=self._owner,
            exclude=question.exclude,
        )
