"""What a server's first call would wait for, loaded at its start on a thread of its own.

A process loads its parts on first use: the embedding model at the first text embedded (about a second),
the secret guard's detectors at the first text checked, the SQLite store's vector index at the first search
(its snapshot read and the rows since caught up: 0.2-0.4 s at 100,000 memories, 2.6 s at a million). A server
that did nothing until its first call made that call wait for all of them: every session's first recall
through ``zm mcp``, each worker's first call under ``zm serve``. Loaded here as soon as the server runs,
while it already answers, they are ready when the first call comes; a call that comes sooner waits for
the part being loaded (each is loaded once, under its own lock), not for a second load.

Nothing here is needed: a step that fails is logged and left to the call that needs it, which then fails
or succeeds as it would have.

After that, ``follower`` keeps the index caught up with the rows other processes write: a bulk import by
``zm import`` while the server is idle left all its rows to the server's next search (217 ms at 30,000
memories, against 9 ms once caught up); read a second at a time as they arrive, each catch-up is short and
off the calls' path.

``zm serve`` adds a last step on SQLite (``QUERY_PROCESS``): it starts the query process
(``embedding/query_process.py``), where recall's queries are embedded while its reads go on here, if a
query's embedding is slow enough to be worth the hand-off, the server may run on two cores or more, and
``ZM_QUERY_PROCESS`` is not 0.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable

from zero_memory.app import App
from zero_memory.background import Loop
from zero_memory.embedding.base import embed_queries
from zero_memory.embedding.query_process import QueryProcess
from zero_memory.memory.guard import find_secret

log = logging.getLogger(__name__)

WARM_TEXT = "warm-up"
# A query embedded in less than this stays in the server's process: the hand-off to the query process costs
# ~0.05 ms (the bundled model embeds a query in 1.5-3 ms, the tests' hashing embedder in 0.02 ms).
QUERY_PROCESS_MIN_S = 0.0005
# How often the follower brings the index up to the database: one read of the rows changed since (none, idle).
FOLLOW_INTERVAL_S = 1.0


def _model(app: App) -> None:
    embed_queries(app.embedder, [WARM_TEXT])


def _guard(app: App) -> None:
    find_secret(WARM_TEXT)


def _index(app: App) -> None:
    app.store.load_index()


def start_query_process(app: App) -> None:
    """Start the app's query process, unless it is off (``ZM_QUERY_PROCESS=0``), its store reads in a server of
    its own (PostgreSQL, where a thread embeds while the server reads), one runs already, this process may run
    on one core only (the child would only take turns with it), or a query is embedded quickly anyway."""
    if not app.settings.query_process or app.store.reads_in_server or app.query_process is not None:
        return
    if len(os.sched_getaffinity(0)) < 2:
        return
    if min(_timed(lambda: embed_queries(app.embedder, [WARM_TEXT])) for _ in range(3)) < QUERY_PROCESS_MIN_S:
        return
    app.query_process = QueryProcess(app.settings.embedding_model, app.settings.home / "cache", app.embedder)
    app.query_process.start()


def _timed(work: Callable[[], object]) -> float:
    began = time.perf_counter()
    work()
    return time.perf_counter() - began


# In order of need: every call embeds or checks a text; only searches need the index.
STEPS: tuple[tuple[str, Callable[[App], None]], ...] = (
    ("embedding model", _model),
    ("secret guard", _guard),
    ("vector index", _index),
)
# After them in ``zm serve``: the query process only makes recalls faster (it loads its own model meanwhile,
# and calls embed their queries here until it is ready). Not in ``zm mcp``, a process per client session,
# where a second copy of the model would double each session's memory for a millisecond a recall.
QUERY_PROCESS: tuple[str, Callable[[App], None]] = ("query process", start_query_process)


class WarmUp:
    """The steps, one after the other on a daemon thread; ``warm`` is set once every one has loaded its part
    (``failed`` names those that did not)."""

    def __init__(self, app: App, steps: tuple[tuple[str, Callable[[App], None]], ...] = STEPS) -> None:
        self.app = app
        self.steps = steps
        self.warm = threading.Event()
        self.seconds: dict[str, float] = {}
        self.failed: list[str] = []
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="zm-warm-up", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Start no further step and wait for the one running (the store closes next: its index is loaded
        under the index's lock, which closing waits for anyway)."""
        self._stopping.set()
        if self._thread.ident is not None:
            self._thread.join()

    def _run(self) -> None:
        for name, step in self.steps:
            if self._stopping.is_set():
                return
            began = time.perf_counter()
            try:
                step(self.app)
            except Exception:
                log.warning("warm-up: loading the %s failed; the first call needing it loads it", name, exc_info=True)
                self.failed.append(name)
                continue
            self.seconds[name] = time.perf_counter() - began
        log.info("warm-up: %s", ", ".join(f"{name} {seconds:.2f} s" for name, seconds in self.seconds.items()))
        if not self.failed:
            self.warm.set()


def follower(app: App) -> Loop:
    """The index brought up to the database every ``FOLLOW_INTERVAL_S`` (``Store.load_index``: nothing to read
    when no row changed, nothing at all on PostgreSQL)."""
    return Loop(
        "zm-index-follow", app.store.load_index, every=lambda: FOLLOW_INTERVAL_S, failed="catching the vector index up"
    )
