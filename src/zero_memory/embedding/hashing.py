"""A deterministic bag-of-words embedder: no model, for tests that need a second model id.

Texts sharing words land close together; it is not a semantic model and is
never the default.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from zero_memory.embedding.base import normalize

WORD_RE = re.compile(r"\w+", re.UNICODE)


class HashingEmbedder:
    def __init__(self, dim: int = 512) -> None:
        self.dim = dim
        self.model_id = f"hash-{dim}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in WORD_RE.findall(text.lower()):
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                out[row, int.from_bytes(digest[:4], "little") % self.dim] += 1.0
        return normalize(out)
