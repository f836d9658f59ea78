"""An embedder run in a child process: its passes on one core, the caller's writes on the other.

The model's pass holds the GIL for much of its time (a pure-Python tokenizer, small numpy steps), so a
thread that embeds while another writes shares one core with it: measured at 100,000 memories, an import
embedding on a thread ahead of its writes used 0.95 of a core (145 s of CPU in 152 s). A forked child
inherits the loaded model (its pages shared, not copied) and has a GIL of its own; texts go to it and
vectors come back through a pipe, 512 KB for a batch of 256.

A bulk import's children may run at a lower priority (``niceness``): on a machine that also serves
recalls, the cores go to those first and the import takes what is left (on an idle machine it takes
everything, as before).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager

import numpy as np

from zero_memory.embedding.base import Embedder, embed_queries

_child_embedder: Embedder | None = None


class _ChildEmbedder:
    def __init__(self, embedder: Embedder, pool: ProcessPoolExecutor) -> None:
        self.model_id = embedder.model_id
        self.dim = embedder.dim
        self._pool = pool

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._pool.submit(_embed, list(texts)).result()

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._pool.submit(_embed_queries, list(texts)).result()


@contextmanager
def embedding_apart(embedder: Embedder, *, processes: int = 1, niceness: int = 0) -> Iterator[Embedder]:
    """``embedder`` run by forked child processes for the duration of the block, one pass at a time each;
    the children are gone after it. Calls from several threads at once are embedded side by side. The
    children run ``niceness`` steps below the caller's priority (``os.nice``).

    An exception raised in the child's pass is raised by ``embed`` in the caller; a child that dies
    raises ``BrokenProcessPool``.
    """
    pool = ProcessPoolExecutor(
        max_workers=processes,
        mp_context=multiprocessing.get_context("fork"),
        initializer=_adopt,
        initargs=(embedder, niceness),
    )
    try:
        yield _ChildEmbedder(embedder, pool)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _adopt(embedder: Embedder, niceness: int) -> None:
    global _child_embedder
    _child_embedder = embedder
    if niceness:
        os.nice(niceness)


def _embed(texts: list[str]) -> np.ndarray:
    assert _child_embedder is not None
    return _child_embedder.embed(texts)


def _embed_queries(texts: list[str]) -> np.ndarray:
    assert _child_embedder is not None
    return embed_queries(_child_embedder, texts)
