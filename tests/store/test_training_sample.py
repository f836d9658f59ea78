"""The training sample of a build: copied in the search that starts it, made into vectors on the build's thread."""

from __future__ import annotations

import numpy as np
import pytest

from tests.store.factories import DIM, random_unit
from zero_memory.store.sqlite import clusters as clusters_module
from zero_memory.store.sqlite.clusters import Clusters
from zero_memory.store.sqlite.int8_rows import Int8Rows
from zero_memory.store.sqlite.vector_index import Row, VectorIndex


def stored(count: int) -> np.ndarray:
    return np.stack([random_unit(n) for n in range(count)])


def filled(vectors: np.ndarray) -> Clusters:
    clusters = Clusters.trained(vectors, lists=16)
    clusters.add(np.arange(len(vectors)), vectors)
    return clusters


def test_a_sample_of_the_clusters_is_distinct_stored_rows_drawn_from_every_list() -> None:
    vectors = stored(600)
    clusters = filled(vectors)
    sample = clusters.sample_later(200)()
    nearest = (sample @ vectors.T).argmax(axis=1)
    assert sample.shape == (200, DIM) and len(set(nearest.tolist())) == 200
    assert ((sample @ vectors.T).max(axis=1) > 0.99).all()
    assert len(clusters.sample_later(10_000)()) == 600  # every row when fewer than asked


def test_the_clusters_sample_is_copied_when_asked_for_not_when_made_into_vectors() -> None:
    """The lists change under other threads while a build trains: what it is given is the rows as they were."""
    vectors = stored(300)
    clusters = filled(vectors)
    later = clusters.sample_later(300)
    clusters.remove(np.arange(300))
    clusters.add(np.arange(300, 600), -vectors)
    sample = later()
    assert ((sample @ vectors.T).max(axis=1) > 0.99).all()


def test_the_int8_rows_sample_is_copied_when_asked_for() -> None:
    vectors = stored(50)
    rows = Int8Rows(DIM)
    rows.grow(50)
    rows.put(np.arange(50), vectors)
    later = rows.rows_later(np.arange(10))
    rows.put(np.arange(50), -vectors)
    assert (np.einsum("ij,ij->i", later(), vectors[:10]) > 0.99).all()


class _Rows:
    def __init__(self, count: int) -> None:
        self.rows: list[Row] = [
            (seq, "alice", "user.alice", "fact", True, random_unit(seq).tobytes(), seq) for seq in range(1, count + 1)
        ]

    def changed_rows(self, after_rev: int, limit: int) -> list[Row]:
        return [row for row in self.rows if row[6] > after_rev][:limit]


def test_a_search_that_starts_a_build_from_the_clusters_decodes_no_vector(monkeypatch: pytest.MonkeyPatch) -> None:
    decoded: list[int] = []
    decode = clusters_module._decode

    def recorded(quantizer: object, codes: np.ndarray) -> np.ndarray:
        decoded.append(len(codes))
        return decode(quantizer, codes)

    monkeypatch.setattr(clusters_module, "_decode", recorded)
    index = VectorIndex(DIM, ann_min_rows=100, exact_filter_rows=0)
    index.refresh(_Rows(400))  # type: ignore[arg-type]
    assert index.uses_clusters and index._matrix is None
    later = index._sample_later(8)
    assert decoded == []
    assert later().shape == (min(400, 8 * clusters_module.TRAIN_PER_LIST), DIM) and decoded
