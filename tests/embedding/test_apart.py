"""An embedder run in a forked child gives the vectors the embedder gives, raises what it raises, and is
gone with the block."""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Sequence

import numpy as np
import pytest

from zero_memory.embedding import Embedder
from zero_memory.embedding.apart import embedding_apart
from zero_memory.embedding.hashing import HashingEmbedder
from zero_memory.embedding.usem import UniversalSentenceEncoder


class FailingEmbedder(HashingEmbedder):
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        raise RuntimeError("the model failed")


def test_the_child_gives_the_embedder_s_own_vectors(embedder: Embedder) -> None:
    texts = ["the build uses uv", "deploys go out on Tuesdays", "le déploiement part le mardi"]
    with embedding_apart(embedder) as apart:
        assert (apart.model_id, apart.dim) == (embedder.model_id, embedder.dim)
        np.testing.assert_allclose(apart.embed(texts), embedder.embed(texts), atol=1e-6)
    assert multiprocessing.active_children() == []


class NicenessEmbedder(HashingEmbedder):
    """Gives, for each text, the priority (niceness) of the process that embeds it."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.full((len(texts), self.dim), float(os.nice(0)), dtype=np.float32)


def test_the_children_run_at_the_niceness_asked_and_the_caller_keeps_its_own() -> None:
    caller = os.nice(0)
    with embedding_apart(NicenessEmbedder(), niceness=5) as apart:
        assert apart.embed(["anything"])[0, 0] == min(caller + 5, 19)
    with embedding_apart(NicenessEmbedder()) as apart:
        assert apart.embed(["anything"])[0, 0] == caller
    assert os.nice(0) == caller


def test_a_failing_pass_in_the_child_raises_in_the_caller() -> None:
    with pytest.raises(RuntimeError, match="the model failed"), embedding_apart(FailingEmbedder()) as apart:
        apart.embed(["anything"])
    assert multiprocessing.active_children() == []


def test_a_model_held_by_another_thread_when_the_child_is_forked_is_free_in_the_child() -> None:
    """The thread holding it is not in the child to let go of it."""
    model = UniversalSentenceEncoder()
    vectors: list[np.ndarray] = []
    with model._lock:
        with embedding_apart(model) as apart:
            worker = threading.Thread(target=lambda: vectors.append(apart.embed(["the build uses uv"])))
            worker.start()
            worker.join(120)
            alive = worker.is_alive()
        assert not alive
    assert vectors[0].shape == (1, model.dim)
