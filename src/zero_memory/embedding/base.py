"""The ``Embedder`` protocol.

Every vector is stored with the model id and dimension that made it, so a
model change is detected and ``zm db reindex`` re-embeds. Nothing is ever
downloaded at run time: the default model's weights ship inside its package.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np


class Embedder(Protocol):
    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalized float32 vectors, one row per text."""
        ...


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """Searches embedded the way the model expects them: a model trained with a query prefix (E5) has an
    ``embed_queries`` beside ``embed``, which embeds what is stored and compared; any other embeds both
    alike."""
    queries = getattr(embedder, "embed_queries", None)
    return embedder.embed(texts) if queries is None else queries(texts)


def normalize(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms
