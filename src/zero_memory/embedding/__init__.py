"""Embedders: the protocol and the bundled local model."""

from __future__ import annotations

from zero_memory.embedding.base import Embedder, embed_queries
from zero_memory.embedding.factory import build_embedder

__all__ = ["Embedder", "build_embedder", "embed_queries"]
