"""Memory vectors partitioned into clusters, keyed by the memory's ``seq``: a thin adapter over faiss.

An inverted-file index (faiss ``IndexIVFScalarQuantizer``): k-means splits the
vectors into ``lists`` clusters; each vector is kept, quantized to 8 bits a
dimension, in the list of its nearest centroid; a search scans the lists of the
``probes`` centroids nearest the query. Chosen by measurement over the HNSW
graph it replaced (docs/benchmarks-archive.md, "Choosing the index"): on the
benchmark corpus, whose templated near-duplicates form dense clusters, a
graph walk had to grow in proportion to the rows to keep 0.98 of an exact
scan's top ten (about 7,000 candidates at a million rows), while scanning a
share of the lists keeps it with a search that grows about as the square root
of the rows (0.98 at a million rows in about 3 ms). It removes and replaces a
key, saves to one file, and builds in about a minute at a million rows where
linking the graph took most of an hour.

Scores it returns are approximate (8-bit codes, within about 0.015 of the
exact cosine); the store re-scores every hit exactly
from the database's float32 vector, so only which rows are candidates depends
on the index, never a similarity a caller sees.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

# faiss's loader reports at INFO and DEBUG which instruction set it picked: not the server's business, and a
# CLI whose stderr starts with its error code must not start with that.
logging.getLogger("faiss.loader").setLevel(logging.WARNING)

import faiss as _faiss  # noqa: E402 (after its loader's logger is quieted)

# faiss's stubs lack much of what is called here (DirectMap, SearchParametersIVF's arguments, the inverted
# lists' ids): typed Any, and checked by the tests.
faiss: Any = _faiss

# One thread: the app runs one BLAS thread too, leaving the other core to the next call (a batch search
# asks for more, for itself).
faiss.omp_set_num_threads(1)

# Each component quantized to 8 bits over [-1, 1], where every component of a unit vector lies: a range
# trained on a sample clips the components of later vectors outside it (measured: a row scored 0.03 low,
# lost below a floor), this one clips none. Scores are within about 0.015 of the exact cosine (0.003
# typical), the error the store's slack and tie margins are set for.
QUANTIZER = faiss.ScalarQuantizer.QT_8bit_uniform
UNIT_RANGE = np.array([-1.0, 2.0], dtype=np.float32)  # (lowest value, width)
TRAIN_PER_LIST = 32  # training vectors a centroid (k-means on a sample of the rows)
TRAIN_ITERATIONS = 12
FEWEST_LISTS = 64
# The lists scanned for a search, by the number of lists, measured on the benchmark corpus
# (docs/benchmarks-archive.md, "The SQLite vector index"): the share that keeps 0.98 of an exact scan's top ten for
# text and paraphrase queries shrinks as the lists grow in number (a quarter of 512 lists at 100k rows,
# 9 % of 4,096 at a million, where 384 found 0.985 of the paraphrase queries' top ten and 320 0.983, too
# close to 0.98); interpolated on the lists' logarithm, widened by as much for each doubling beyond the last.
PROBES = ((256, 64), (512, 128), (1_024, 192), (2_048, 256), (4_096, 384), (8_192, 512))
ROWS_A_PROBE = 4  # a search asking for many hits scans enough lists to hold this many times as many rows


def lists_for(rows: int) -> int:
    """The lists for an index of ``rows``: the power of two nearest four times their square root (no
    fewer than ``FEWEST_LISTS``, no more than the rows)."""
    rows = max(rows, 1)
    return min(rows, max(FEWEST_LISTS, 2 ** round(math.log2(4 * math.sqrt(rows)))))


def probes_for(lists: int) -> int:
    """The lists a search scans in an index of ``lists``."""
    sizes, probes = zip(*PROBES, strict=True)
    doublings = np.log2(lists)
    widened = float(np.interp(doublings, np.log2(sizes), probes))
    beyond = max(0.0, doublings - math.log2(sizes[-1]))
    step = probes[-1] - probes[-2]
    return min(lists, math.ceil(widened + beyond * step))


@dataclass(frozen=True, slots=True)
class Selection:
    """The keys a search may return, as a bitmap a scan checks before scoring a row, and how many."""

    bitmap: np.ndarray  # uint8, key k at bit k % 8 of byte k // 8
    rows: int  # keys selected

    @classmethod
    def of(cls, mask: np.ndarray) -> Selection:
        """The keys where ``mask`` (by key) is true."""
        return cls(np.packbits(mask, bitorder="little"), int(np.count_nonzero(mask)))


class Clusters:
    def __init__(self, index: Any) -> None:
        self._index = index
        self.dim = int(index.d)
        self.lists = int(index.nlist)
        self.probes = probes_for(self.lists)
        self._present = np.zeros(0, dtype=bool)  # by key
        keys = _stored_keys(index)
        if len(keys):
            self._mark(keys, True)

    @classmethod
    def trained(cls, sample: np.ndarray, *, lists: int) -> Clusters:
        """An empty index whose centroids are k-means of ``sample`` (a few dozen vectors a list)."""
        sample = _unit(sample)
        lists = max(1, min(lists, len(sample)))
        dim = sample.shape[1]
        index = faiss.IndexIVFScalarQuantizer(faiss.IndexFlatIP(dim), dim, lists, QUANTIZER, faiss.METRIC_INNER_PRODUCT)
        index.by_residual = False  # a row's codes are its own vector's, whatever list it is filed in
        index.cp.niter = TRAIN_ITERATIONS
        index.cp.min_points_per_centroid = 1  # a small sample trains as well as it can, without a warning
        index.cp.max_points_per_centroid = TRAIN_PER_LIST
        index.train(sample)
        faiss.copy_array_to_vector(UNIT_RANGE, index.sq.trained)
        index.set_direct_map_type(faiss.DirectMap.Hashtable)  # remove and read back a key without a scan
        return cls(index)

    @classmethod
    def restore(cls, path: Path, dim: int) -> Clusters:
        """An index saved by ``save``; ValueError when the file is not one of the expected kind."""
        try:
            index = faiss.read_index(os.fspath(path))
        except RuntimeError as error:
            raise ValueError(f"not a saved index: {str(error).splitlines()[0][:120]}") from error
        if not isinstance(index, faiss.IndexIVFScalarQuantizer) or index.d != dim:
            raise ValueError(f"not an inverted-file index of {dim} dimensions")
        kind = (index.direct_map.type, index.metric_type, index.by_residual, index.sq.qtype)
        if kind != (faiss.DirectMap.Hashtable, faiss.METRIC_INNER_PRODUCT, False, QUANTIZER):
            raise ValueError("an inverted-file index of another kind")
        if not np.array_equal(faiss.vector_to_array(index.sq.trained), UNIT_RANGE):
            raise ValueError("an inverted-file index quantized over another range")
        return cls(index)

    def save(self, path: Path) -> None:
        faiss.write_index(self._index, os.fspath(path))

    def __len__(self) -> int:
        return int(self._index.ntotal)

    def outgrown(self, rows: int) -> bool:
        """Whether an index of ``rows`` should be trained again: it needs twice the lists, or a quarter."""
        wanted = lists_for(rows)
        return wanted >= 2 * self.lists or wanted * 4 <= self.lists

    def counts(self, vectors: np.ndarray) -> np.ndarray:
        """How many of these vectors each list would be given (a ``reserve`` for them)."""
        _, nearest = self._index.quantizer.search(_unit(vectors), 1)
        return np.bincount(nearest[:, 0], minlength=self.lists).astype(np.int64)

    def reserve(self, counts: np.ndarray) -> None:
        """Make room in each list for ``counts[list]`` rows at once. A list grows by doubling as rows are
        filed one batch at a time: filing a million rows that way took 816 MB for 517 MB of codes; with
        room made for the rows counted beforehand, what they need."""
        invlists = faiss.downcast_InvertedLists(self._index.invlists)
        for number in np.flatnonzero(counts):
            size = invlists.list_size(int(number))
            invlists.resize(int(number), size + int(counts[number]))  # allocates exactly that much
            invlists.resize(int(number), size)  # and keeps it, empty

    def add(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        """Add new keys; a key already present is replaced."""
        if len(keys) == 0:
            return
        keys = np.asarray(keys, dtype=np.int64)
        self.remove(keys)
        self._index.add_with_ids(_unit(vectors), keys)
        self._mark(keys, True)

    def remove(self, keys: Sequence[int] | np.ndarray) -> None:
        keys = np.asarray(keys, dtype=np.int64)
        present = keys[self.contains(keys)] if len(keys) else keys
        if len(present):
            self._index.remove_ids(faiss.IDSelectorArray(present))
            self._mark(present, False)

    def contains(self, keys: np.ndarray) -> np.ndarray:
        keys = np.asarray(keys, dtype=np.int64)
        inside = (keys >= 0) & (keys < len(self._present))
        found = np.zeros(len(keys), dtype=bool)
        found[inside] = self._present[keys[inside]]
        return found

    def keys(self) -> np.ndarray:
        return np.flatnonzero(self._present).astype(np.int64)

    def sample_later(self, size: int) -> Callable[[], np.ndarray]:
        """``size`` rows drawn evenly from every list (all of them if fewer), as a call that makes them float32
        vectors: their 8-bit codes are copied now, list by list (the lists change under other threads), and
        decoded by the call (a build's thread). Read back a key at a time in the search that started a
        build, 32,000 rows took 47 ms of it (600 ms where the kernel compacted memory for the output)."""
        invlists = self._index.invlists
        sizes = np.array([invlists.list_size(n) for n in range(self.lists)], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(sizes)])
        total = int(starts[-1])
        picked = np.sort(np.random.default_rng(total).choice(total, min(size, total), replace=False))
        numbers = np.searchsorted(starts, picked, side="right") - 1
        width = invlists.code_size
        codes = np.empty((len(picked), width), dtype=np.uint8)
        bounds = np.searchsorted(numbers, np.arange(self.lists + 1))
        for number in np.unique(numbers).tolist():
            size_of = int(sizes[number])
            stored = faiss.rev_swig_ptr(invlists.get_codes(number), size_of * width).reshape(size_of, width)
            lo, hi = bounds[number], bounds[number + 1]
            codes[lo:hi] = stored[picked[lo:hi] - starts[number]]
        return partial(_decode, self._index.sq, codes)

    def vectors(self, keys: np.ndarray) -> np.ndarray:
        """The stored (8-bit) vectors of present keys as float32 rows: for ranking, not for scores."""
        if len(keys) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.asarray(self._index.reconstruct_batch(np.asarray(keys, dtype=np.int64)), dtype=np.float32)

    @property
    def narrow_probes(self) -> int:
        """The lists scanned for a stored memory's own neighbours (the sweep's searches): a quarter of a
        query's. Measured on the benchmark corpus (docs/benchmarks-archive.md, "The SQLite vector index"): a sixth
        found 0.995-1.000 of the exact top ten from 100k rows up, but 0.978 at 20k, where it was 21 of 512
        lists."""
        return min(self.lists, max(16, self.probes // 4))

    def search(
        self,
        vectors: np.ndarray,
        count: int,
        *,
        within: Selection | None = None,
        probes: int | None = None,
        threads: int = 1,
    ) -> tuple[np.ndarray, np.ndarray]:
        """(keys, similarities) of each vector's ``count`` nearest, most similar first; -1 pads a short row.

        ``within``: only keys it selects are scanned and returned. ``probes``: the lists scanned (None:
        the index's own ``probes``); more when ``count`` needs them to hold enough selected rows."""
        vectors = _unit(np.atleast_2d(vectors))
        selected = len(self) if within is None else min(within.rows, len(self))
        if count <= 0 or selected == 0:
            return np.full((len(vectors), 0), -1, dtype=np.int64), np.zeros((len(vectors), 0), dtype=np.float32)
        enough = math.ceil(ROWS_A_PROBE * count * self.lists / selected)
        params = faiss.SearchParametersIVF(nprobe=min(self.lists, max(probes or self.probes, enough)))
        # faiss reads the bitmap where it is, through the selector: both are held until the search returns.
        selector = None if within is None else faiss.IDSelectorBitmap(len(within.bitmap), faiss.swig_ptr(within.bitmap))
        if selector is not None:
            params.sel = selector
        if threads > 1:
            faiss.omp_set_num_threads(threads)
        try:
            similarities, keys = self._index.search(vectors, count, params=params)
        finally:
            if threads > 1:
                faiss.omp_set_num_threads(1)
        similarities = np.where(keys >= 0, similarities, -np.inf).astype(np.float32)
        return keys.astype(np.int64), similarities

    def _mark(self, keys: np.ndarray, present: bool) -> None:
        top = int(keys.max()) + 1
        if top > len(self._present):
            grown = np.zeros(max(top, 2 * len(self._present), 1024), dtype=bool)
            grown[: len(self._present)] = self._present
            self._present = grown
        self._present[keys] = present


def _decode(quantizer: Any, codes: np.ndarray) -> np.ndarray:
    """8-bit codes as the float32 vectors they stand for."""
    return np.asarray(quantizer.decode(codes), dtype=np.float32)


def _unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
    return np.ascontiguousarray(vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12))


def _stored_keys(index: Any) -> np.ndarray:
    invlists = index.invlists
    found = [
        faiss.rev_swig_ptr(invlists.get_ids(n), invlists.list_size(n)).copy()
        for n in range(index.nlist)
        if invlists.list_size(n)
    ]
    return np.concatenate(found).astype(np.int64) if found else np.zeros(0, dtype=np.int64)
