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
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from zero_memory.app import App
from zero_memory.background import Loop
from zero_memory.embedding.base import embed_queries
from zero_memory.memory.guard import find_secret

log = logging.getLogger(__name__)

WARM_TEXT = "warm-up"
# How often the follower brings the index up to the database: one read of the rows changed since (none, idle).
FOLLOW_INTERVAL_S = 1.0


def _model(app: App) -> None:
    embed_queries(app.embedder, [WARM_TEXT])


def _guard(app: App) -> None:
    find_secret(WARM_TEXT)


def _index(app: App) -> None:
    app.store.load_index()


# In order of need: every call embeds or checks a text; only searches need the index.
STEPS: tuple[tuple[str, Callable[[App], None]], ...] = (
    ("embedding model", _model),
    ("secret guard", _guard),
    ("vector index", _index),
)


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
