"""The selectable multilingual-e5-small: queries and passages embedded with their own prefixes, translations
close, the same vectors from a forked child (an import embeds there), and the name that selects it."""

from __future__ import annotations

import multiprocessing
import threading

import numpy as np
import pytest

from zero_memory.embedding import build_embedder, embed_queries
from zero_memory.embedding.apart import embedding_apart
from zero_memory.embedding.e5 import MultilingualE5Small
from zero_memory.embedding.hashing import HashingEmbedder


@pytest.fixture(scope="module")
def e5() -> MultilingualE5Small:
    model = build_embedder("e5-small")
    assert isinstance(model, MultilingualE5Small)
    return model


def test_vectors_are_normalised_and_queries_differ_from_passages(e5: MultilingualE5Small) -> None:
    text = "Deploys happen on Tuesdays and Thursdays"
    passage, query = e5.embed([text]), embed_queries(e5, [text])
    assert passage.shape == query.shape == (1, 384)
    assert passage.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(passage, axis=1), 1.0, atol=1e-5)
    assert float(passage[0] @ query[0]) < 0.999  # the prefix is part of what is embedded
    assert e5.embed([]).shape == (0, 384)


def test_a_question_finds_the_statement_that_answers_it_across_languages(e5: MultilingualE5Small) -> None:
    stored = e5.embed(["Der API-Server lauscht auf Port 8080", "Bananas are rich in potassium"])
    question = embed_queries(e5, ["Which port does the API server listen on?"])[0]
    assert int(np.argmax(stored @ question)) == 0


def test_other_models_embed_queries_as_they_embed_anything() -> None:
    model = HashingEmbedder(64)
    np.testing.assert_array_equal(embed_queries(model, ["a query"]), model.embed(["a query"]))


def test_a_forked_child_gives_the_same_vectors_even_when_another_thread_held_the_engine(
    e5: MultilingualE5Small,
) -> None:
    texts = ["the build uses uv", "le déploiement part le mardi"]
    expected, queries = e5.embed(texts), embed_queries(e5, texts)
    found: list[np.ndarray] = []
    with e5._lock, embedding_apart(e5) as apart:
        worker = threading.Thread(target=lambda: found.extend([apart.embed(texts), embed_queries(apart, texts)]))
        worker.start()
        worker.join(120)
        alive = worker.is_alive()
    assert not alive
    np.testing.assert_allclose(found[0], expected, atol=1e-6)
    np.testing.assert_allclose(found[1], queries, atol=1e-6)
    assert multiprocessing.active_children() == []
