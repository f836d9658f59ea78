"""An HNSW graph of memory vectors, keyed by the memory's ``seq``: a thin adapter over usearch.

usearch was chosen by measurement (docs/benchmarks.md, "Choosing the index"):
at 100k memories it builds and adds fastest, supports removing and replacing
a key, saves to and restores from one file, and stores vectors as int8, which
keeps a million 512-dimension vectors in ~0.7 GB with the graph. Scores it
returns are approximate (int8); the store re-scores every hit exactly from the
database's float32 vector, so only which rows are candidates depends on the
graph, never a similarity a caller sees.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from usearch.index import Index

# Measured on the benchmark corpus at 100k memories (docs/benchmarks.md, "The SQLite vector index"): text
# queries fall between dense clusters of templated near-duplicates, where a walk of a 16-edge graph found
# 0.80 of an exact scan's top ten at expansion 512 and 0.96 at 2048; 32 edges linked with expansion 256
# find 0.98-0.99 at 1024 (2-4 ms a walk, was 0.6-1.6). Stored memories by their own vectors: ≥ 0.997 either way.
# Linked with expansion 512 (1.9 times the CPU to link), the same 32 edges find 0.992 / 0.990 with a walk of
# 640, in 4.6-4.7 ms where the walk of 1,024 in a graph linked with 256 took 6.7-7.2 for 0.984 / 0.991 (same
# run, load 1.1-1.6); a walk of 512 found 0.991 / 0.983 and 0.986 / 0.981 in two builds: too close to 0.98.
CONNECTIVITY = 32  # edges per node; a snapshot of another connectivity is rebuilt, not used
EXPANSION_ADD = 512  # candidates kept while linking a new node
# The walk (candidates kept while searching; raised to the number asked for when larger) that finds 0.98 of
# the top ten in a graph of up to 100k rows linked with each expansion. A snapshot says how its graph was
# linked; one that does not was written before it did, linked with 256.
WALKS = {256: 1024, 512: 640}
UNRECORDED_LINKING = 256
# A larger graph needs a wider walk: with more memories the corpus's clusters of near-duplicates grow denser
# and a walk of 640 in a graph linked with 512 finds 0.992 / 0.990 of the top ten (text / paraphrase queries)
# at 100k rows, 0.975 / 0.956 at 200k, 0.915 / 0.837 at 400k (docs/benchmarks.md, "A million memories"). The
# walk is widened with the rows up to 1,280 at 200k (0.994 / 0.984 there), interpolated between the sizes; a
# graph of another linking has its own walk widened in the same proportion. It is not widened further: 0.98
# at 400k takes a walk of about 2,800, 13.9 ms alone where 1,280 takes about 6 (under a shared machine's
# load); at a million memories that would put a recall far past its 15 ms target.
GROWTH = ((100_000, 640), (200_000, 1_280))
DTYPE = "i8"


def walk_for(linked_with: int, rows: int = 0) -> int:
    """The walk for a graph of ``rows`` linked with this expansion: that of the nearest linking measured at
    or below it, widened as the graph outgrows the size it was measured at (``GROWTH``)."""
    measured = [linking for linking in WALKS if linking <= linked_with]
    walk = WALKS[max(measured)] if measured else max(WALKS.values())
    sizes, walks = zip(*GROWTH, strict=True)
    widening = float(np.interp(rows, sizes, walks)) / walks[0]  # 1 below the first size, the last above
    return math.ceil(walk * widening / 32) * 32


class Graph:
    def __init__(self, dim: int, index: Index | None = None, *, linked_with: int = EXPANSION_ADD) -> None:
        """``linked_with``: the expansion the graph's nodes were linked with (a restored graph's, as its
        snapshot records it); new nodes are linked with ``EXPANSION_ADD``, but a graph is only as good as
        its weakest linking, so it keeps the one it had and is searched with that one's walk."""
        self.dim = dim
        self.linked_with = min(linked_with, EXPANSION_ADD)
        self._index = index or Index(
            ndim=dim,
            metric="cos",
            dtype=DTYPE,
            connectivity=CONNECTIVITY,
            expansion_add=EXPANSION_ADD,
        )
        # Not kept in the file.
        self._index.expansion_add = EXPANSION_ADD  # type: ignore[misc]

    @property
    def walk(self) -> int:
        """The candidates a search keeps: the walk for the graph's linking and its present size."""
        return walk_for(self.linked_with, len(self._index))

    def _set_expansion(self, value: int) -> None:
        # usearch declares the setters after the properties, which type checkers read as read-only.
        self._index.expansion_search = value  # type: ignore[misc]

    def __len__(self) -> int:
        return len(self._index)

    @property
    def connectivity(self) -> int:
        return int(self._index.connectivity)

    @classmethod
    def restore(cls, path: Path, dim: int, *, linked_with: int | None = None) -> Graph:
        """A graph saved by ``save`` (``linked_with``: as its snapshot records it, if it does); ValueError
        when the file is not one of the expected shape.

        A graph linked with another connectivity is refused too: its recall is
        that of its own density, and rows added to it would keep that density.
        """
        index = Index.restore(os.fspath(path))
        if index is None or index.ndim != dim or str(index.dtype).lower().rsplit(".", 1)[-1] != DTYPE:
            raise ValueError(f"not an index of {dim} {DTYPE} dimensions")
        if index.connectivity != CONNECTIVITY:
            raise ValueError(f"linked with {index.connectivity} edges a node, not {CONNECTIVITY}")
        return cls(dim, index, linked_with=UNRECORDED_LINKING if linked_with is None else linked_with)

    def save(self, path: Path) -> None:
        self._index.save(os.fspath(path))

    def add(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        """Add new keys; a key already present is replaced.

        Always on one thread: usearch 2.26's parallel insertion leaves some
        nodes unreachable (measured: 22-27 of 3,000 vectors not found by their
        own vector with two threads, none with one), and a node no search
        reaches is a memory recall can no longer find.
        """
        if len(keys) == 0:
            return
        keys = np.asarray(keys, dtype=np.uint64)
        present = keys[self.contains(keys)]
        if len(present):
            self._index.remove(present)
        self._index.add(keys, np.ascontiguousarray(vectors, dtype=np.float32), threads=1)

    def remove(self, keys: Sequence[int] | np.ndarray) -> None:
        keys = np.asarray(keys, dtype=np.uint64)
        present = keys[self.contains(keys)] if len(keys) else keys
        if len(present):
            self._index.remove(present)

    def contains(self, keys: np.ndarray) -> np.ndarray:
        if len(keys) == 0:
            return np.zeros(0, dtype=bool)
        return np.atleast_1d(np.asarray(self._index.contains(np.asarray(keys, dtype=np.uint64)), dtype=bool))

    def keys(self) -> np.ndarray:
        return np.asarray(self._index.keys, dtype=np.int64)

    def vectors(self, keys: np.ndarray) -> np.ndarray:
        """The stored (int8) vectors of present keys as float32 rows: for ranking, not for scores."""
        if len(keys) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        found: Any = self._index.get(np.asarray(keys, dtype=np.uint64), dtype="f32")
        return np.stack([np.asarray(v, dtype=np.float32) for v in found])

    def search(
        self, vectors: np.ndarray, count: int, *, threads: int = 1, expansion: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(keys, similarities) of each vector's ``count`` nearest, most similar first; -1 pads a short row.

        ``expansion`` is the candidate list kept while walking the graph (at least ``count``; None: the
        walk for the graph's linking)."""
        expansion = self.walk if expansion is None else expansion
        vectors = np.ascontiguousarray(np.atleast_2d(vectors), dtype=np.float32)
        if count <= 0 or len(self._index) == 0:
            empty = np.full((len(vectors), 0), -1, dtype=np.int64)
            return empty, np.zeros((len(vectors), 0), dtype=np.float32)
        self._set_expansion(max(count, expansion))
        found: Any = self._index.search(vectors, count, threads=threads)
        keys = np.atleast_2d(np.asarray(found.keys)).astype(np.int64)
        with np.errstate(invalid="ignore", over="ignore"):
            similarities = 1.0 - np.atleast_2d(np.asarray(found.distances, dtype=np.float32))
        # One vector gives a Matches (its keys are the found ones), several a BatchMatches (padded rows).
        counts = np.atleast_1d(np.asarray(getattr(found, "counts", len(np.asarray(found.keys)))))
        for row, counted in enumerate(counts):
            keys[row, counted:] = -1
            similarities[row, counted:] = -np.inf
        return keys, similarities
