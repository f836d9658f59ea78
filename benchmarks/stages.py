"""Where one recall's time goes: wall time per stage, summed over each call.

    with Stages(app) as stages:
        for query in texts:
            with stages.call():
                recall(app, caller, query, channel=None)
    print(stages.summary())

Each stage is a set of functions (the embedder's ``embed``, the store
transaction's methods, recall's access look-ups) wrapped for the block's
duration with a timer; whatever a call spends outside them (the transaction's
start and end, the fusion, building the answer) is ``rest``. The timers add a
few microseconds a wrapped call.
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

STAGES: dict[str, tuple[str, ...]] = {
    "embedding": ("embed",),
    "access": ("visibility", "session_state", "read_set"),
    "vector search": ("similar",),
    "word counts": ("text_plan",),
    "full text": ("text_candidates",),
    "text rows": ("memories_with_vectors",),
    "disputes": ("open_disputes_for",),
    "reinforcement": ("sessions_served",),
    "freshness": ("affirmed",),
}


class Stages:
    def __init__(self, app: Any) -> None:
        from zero_memory.memory import freshness
        from zero_memory.memory import recall as recall_module

        with app.store.tx() as tx:
            tx_class = type(tx)
        self._targets: list[tuple[Any, str]] = [(app.embedder, "embed")]
        self._targets += [(recall_module, name) for name in STAGES["access"]]
        self._targets += [(freshness, "affirmed")]
        self._targets += [(tx_class, name) for stage in STAGES.values() for name in stage if hasattr(tx_class, name)]
        self._stage_of = {name: stage for stage, names in STAGES.items() for name in names}
        self._saved: list[tuple[Any, str, Any, bool]] = []
        self._current: dict[str, float] = defaultdict(float)
        self._depth = 0
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
            if self._depth:  # a stage inside another (text_plan inside fulltext) counts once, in the outer one
                return function(*args, **kwargs)
            self._depth += 1
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self._current[stage] += time.perf_counter() - started
                self._depth -= 1

        return timed

    @contextmanager
    def call(self) -> Iterator[None]:
        self._current = defaultdict(float)
        started = time.perf_counter()
        yield
        total = time.perf_counter() - started
        row = {stage: self._current.get(stage, 0.0) * 1000 for stage in STAGES}
        row["rest"] = total * 1000 - sum(row.values())
        row["total"] = total * 1000
        self.calls.append(row)

    def summary(self) -> dict[str, float]:
        """Each stage's median over the calls, in ms (the medians do not add up to the total's)."""
        if not self.calls:
            return {}
        return {stage: round(statistics.median(c[stage] for c in self.calls), 2) for stage in self.calls[0]}
