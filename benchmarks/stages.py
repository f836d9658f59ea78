"""Where one recall's time goes: wall time per stage, summed over each call.

    with Stages(app) as stages:
        for query in texts:
            with stages.call():
                recall(app, caller, query, channel=None)
    print(stages.summary())

Each stage is a set of functions (the embedder's ``embed``, the store
transaction's methods, recall's access look-ups and its ``rank``, the SQLite
index's ``candidates``) wrapped for the block's
duration with a timer; whatever a call spends outside them (the transaction's
start and end, the fusion, building the answer, waiting for work done on
another thread) is ``rest``. A stage run on another thread than the call's is
reported as ``<stage> (beside)`` and left out of ``rest``. The timers add a few
microseconds a wrapped call.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

STAGES: dict[str, tuple[str, ...]] = {
    "embedding": ("embed", "take"),  # ``take``: waiting for the query process's vector
    "access": ("visibility", "session_state", "read_set"),
    "index catch-up": ("vector_search",),  # SQLite: the index brought up to the transaction
    "index scan": ("candidates",),  # SQLite: the clusters (or the exact scan) propose rows
    "vector rows": (
        "_verified",
        "_nearest",
        "_nearest_of",
        "_finish_nearest",
        "verified_briefs",
    ),  # SQLite: the proposed rows read and scored; PostgreSQL: the search (its wait, once sent beside the full text)
    "word counts": ("text_plan",),
    "full text": ("text_briefs",),
    # The open disputes, the sessions served (reinforcement) and the anchors, asked together.
    "disputes, use, anchors": ("candidate_marks",),
    "rank": ("rank",),
    "freshness": ("affirmed",),
}


class Stages:
    def __init__(self, app: Any) -> None:
        from zero_memory.memory import freshness
        from zero_memory.memory import recall as recall_module

        with app.store.tx() as tx:
            tx_class = type(tx)
        self._targets: list[tuple[Any, str]] = [(app.embedder, "embed")]
        try:
            from zero_memory.embedding.query_process import Asked

            self._targets.append((Asked, "take"))
        except ImportError:  # a checkout without the query process
            pass
        self._targets += [(recall_module, name) for name in (*STAGES["access"], *STAGES["rank"])]
        self._targets = [(owner, name) for owner, name in self._targets if hasattr(owner, name)]
        index = getattr(app.store, "index", None)
        if index is not None:
            self._targets += [(type(index), "candidates")]
        self._targets += [(freshness, "affirmed")]
        self._targets += [(tx_class, name) for stage in STAGES.values() for name in stage if hasattr(tx_class, name)]
        self._stage_of = {name: stage for stage, names in STAGES.items() for name in names}
        self._saved: list[tuple[Any, str, Any, bool]] = []
        self._current: dict[str, float] = defaultdict(float)
        self._local = threading.local()  # each thread's depth of wrapped calls
        self._caller: threading.Thread | None = None
        self.calls: list[dict[str, float]] = []

    def __enter__(self) -> Stages:
        for owner, name in self._targets:
            # Put back as it was: an attribute of the object itself, or none (a method of its class).
            self._saved.append((owner, name, vars(owner).get(name), name in vars(owner)))
            setattr(owner, name, self._timed(self._stage_of[name], getattr(owner, name)))
        return self

    def __exit__(self, *exc: object) -> None:
        for owner, name, original, own in reversed(self._saved):
            if own:
                setattr(owner, name, original)
            else:
                delattr(owner, name)
        self._saved.clear()

    def _timed(self, stage: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            depth = getattr(self._local, "depth", 0)
            if depth:  # a stage inside another (text_plan inside fulltext) counts once, in the outer one
                return function(*args, **kwargs)
            self._local.depth = 1
            name = stage if threading.current_thread() is self._caller else f"{stage} (beside)"
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self._current[name] += time.perf_counter() - started
                self._local.depth = 0

        return timed

    @contextmanager
    def call(self) -> Iterator[None]:
        self._current = defaultdict(float)
        self._caller = threading.current_thread()
        started = time.perf_counter()
        yield
        total = time.perf_counter() - started
        row = {stage: self._current.get(stage, 0.0) * 1000 for stage in STAGES}
        row["rest"] = total * 1000 - sum(row.values())
        row.update({f"{stage} (beside)": self._current.get(f"{stage} (beside)", 0.0) * 1000 for stage in STAGES})
        row["total"] = total * 1000
        self.calls.append(row)

    def summary(self) -> dict[str, float]:
        """Each stage's median over the calls, in ms (the medians do not add up to the total's)."""
        if not self.calls:
            return {}
        medians = {stage: round(statistics.median(c[stage] for c in self.calls), 2) for stage in self.calls[0]}
        return {stage: ms for stage, ms in medians.items() if ms or not stage.endswith("(beside)")}
