"""The sweep: candidate pairs of an owner's live memories, nearest neighbours first.

Neighbours come through the store port across all of the owner's scopes and
languages, above a similarity floor, at most N per subject. A pair is
ordered older-first: the judge sees the older memory as A, the newer as B.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

from zero_memory.domain.memory import Memory
from zero_memory.domain.records import pair_key
from zero_memory.store.base import Tx


@dataclass(frozen=True, slots=True)
class Candidate:
    a: Memory
    b: Memory
    similarity: float

    @classmethod
    def of(cls, x: Memory, y: Memory, similarity: float) -> Candidate:
        older, newer = sorted((x, y), key=lambda m: (m.created_at, m.id))
        return cls(older, newer, similarity)

    @property
    def key(self) -> str:
        return pair_key(self.a.id, self.b.id)


def neighbours(tx: Tx, subject: Memory, *, floor: float, limit: int) -> list[Candidate]:
    """The subject's nearest live neighbours of the same owner, as candidate pairs."""
    vector = tx.memory_vector(subject.id)
    if vector is None:
        return []
    found = tx.similar(vector, floor=floor, limit=limit, owner=subject.owner, exclude=[subject.id])
    return [Candidate.of(subject, n.memory, n.similarity) for n in found]


def pairs(tx: Tx, subjects: Iterable[Memory], *, floor: float, limit: int) -> Iterator[Candidate]:
    """Candidate pairs of many subjects, each pair once."""
    seen: set[str] = set()
    for subject in subjects:
        for candidate in neighbours(tx, subject, floor=floor, limit=limit):
            if candidate.key not in seen:
                seen.add(candidate.key)
                yield candidate


def recent_subjects(tx: Tx, owner: str, since: datetime) -> list[Memory]:
    """Live memories of an owner created or touched since a moment: a routine sweep's subjects."""
    subjects: list[Memory] = []
    after: tuple[datetime, str] | None = None
    while True:
        page = tx.live_memories(owner=owner, since=since, after=after, limit=1000)
        subjects += page
        if len(page) < 1000:
            return subjects
        after = (page[-1].created_at, page[-1].id)
