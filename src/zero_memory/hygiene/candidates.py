"""The sweep: candidate pairs of an owner's live memories, nearest neighbours first.

Neighbours come through the store port across all of the owner's scopes and
languages, above a similarity floor, at most N per subject. A pair is
ordered older-first: the judge sees the older memory as A, the newer as B.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from zero_memory.domain.memory import Memory
from zero_memory.domain.records import pair_key
from zero_memory.store.base import Tx

BATCH = 128


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
    """Candidate pairs of many subjects, each pair once; subjects are searched in batches."""
    seen: set[str] = set()
    batch: list[Memory] = []
    for subject in subjects:
        batch.append(subject)
        if len(batch) == BATCH:
            yield from _batch_pairs(tx, batch, floor, limit, seen)
            batch = []
    if batch:
        yield from _batch_pairs(tx, batch, floor, limit, seen)


def _batch_pairs(tx: Tx, batch: list[Memory], floor: float, limit: int, seen: set[str]) -> Iterator[Candidate]:
    vectors = tx.memory_vectors([m.id for m in batch])
    by_owner: dict[str, list[Memory]] = {}
    for subject in batch:
        if subject.id in vectors:
            by_owner.setdefault(subject.owner, []).append(subject)
    for owner, subjects in by_owner.items():
        matrix = np.stack([vectors[m.id] for m in subjects])
        found = tx.similar_many(matrix, floor=floor, limit=limit, owner=owner, excludes=[[m.id] for m in subjects])
        for subject, hits in zip(subjects, found, strict=True):
            for hit in hits:
                candidate = Candidate.of(subject, hit.memory, hit.similarity)
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
