"""Embedders: the protocol and the bundled local model."""

from __future__ import annotations

from zero_memory.embedding.base import Embedder, build_embedder

__all__ = ["Embedder", "build_embedder"]
