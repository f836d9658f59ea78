"""Int8 copies of the vectors, by seq: what a search scans while the first clusters are built.

A float32 matrix of a million 512-dimension vectors is 2 GB, held beside the
clusters being built (0.5 GB); int8 rows are a quarter of that. Their cosines
are within about 0.015 of the exact ones, and the store scores every candidate
exactly from the database's float32 vector anyway, so a scan of these rows
proposes candidates at least as well as the clusters will.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import numpy as np

from zero_memory.store.sqlite.zeroed import zeroed

SCALE = 127.0


class Int8Rows:
    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.codes = np.zeros((0, dim), dtype=np.int8)
        self.norms = np.zeros(0, dtype=np.float32)  # of each row's codes; 0 for a row never put

    def grow(self, capacity: int) -> None:
        if capacity <= len(self.codes):
            return
        codes = zeroed(capacity, self.dim, np.int8)
        codes[: len(self.codes)] = self.codes
        norms = np.zeros(capacity, dtype=np.float32)
        norms[: len(self.norms)] = self.norms
        self.codes, self.norms = codes, norms

    def put(self, seqs: np.ndarray, vectors: np.ndarray) -> None:
        """Keep these rows' vectors (each rounded to the nearest step)."""
        vectors = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
        lengths = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        codes = np.clip(np.rint(vectors / lengths * SCALE), -SCALE, SCALE).astype(np.int8)
        self.codes[seqs] = codes
        self.norms[seqs] = np.linalg.norm(codes.astype(np.float32), axis=1)

    def cosines(self, vectors: np.ndarray, seqs: np.ndarray) -> np.ndarray:
        """(len(vectors), len(seqs)): each vector's cosine with each row (of unit-length vectors)."""
        rows = self.codes[seqs].astype(np.float32)
        sims: np.ndarray = vectors @ rows.T
        sims /= np.maximum(self.norms[seqs], 1e-12)
        return sims

    def rows(self, seqs: np.ndarray) -> np.ndarray:
        """These rows' vectors as float32 (of unit length, to the codes' precision): a sample to train on."""
        return self.rows_later(seqs)()

    def rows_later(self, seqs: np.ndarray) -> Callable[[], np.ndarray]:
        """``rows`` as a call made later (on a build's thread): the codes are copied now, a quarter of the
        float32 vectors the call makes of them."""
        return partial(_unit_rows, self.codes[seqs], self.norms[seqs])


def _unit_rows(codes: np.ndarray, norms: np.ndarray) -> np.ndarray:
    rows = codes.astype(np.float32)
    rows /= np.maximum(norms, 1e-12)[:, None]
    return rows
