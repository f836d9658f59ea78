"""Property: whatever the judge says, hygiene loses nothing.

For any sequence of writes (similar texts, random ranks and kinds), scans
with arbitrary verdicts and confidences (or failures), undos and restores,
every memory ever written keeps its text and is live or restorable, and once
restored it is recallable again.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from zero_memory.access.caller import Caller
from zero_memory.access.users import add_user
from zero_memory.bootstrap import build_app
from zero_memory.domain.verdicts import Verdict
from zero_memory.embedding import Embedder
from zero_memory.hygiene.cycle import scan_written, start_cycle
from zero_memory.hygiene.undo import undo_run
from zero_memory.judge.base import FailureKind
from zero_memory.judge.fake import FakeJudge
from zero_memory.memory.lifecycle import restore_memory
from zero_memory.memory.models import RememberRequest
from zero_memory.memory.recall import recall
from zero_memory.memory.write import remember
from zero_memory.settings import Settings
from zero_memory.store import SYSTEM

SUBJECTS = ["The staging database is {}", "Deploys go through the release pipeline on {}"]
VALUES = ["green", "blue", "red", "8080", "9090", "Fridays", "Mondays"]
TEXTS = st.builds(lambda subject, value: subject.format(value), st.sampled_from(SUBJECTS), st.sampled_from(VALUES))
KINDS = st.sampled_from(["fact", "decision", "gotcha", "preference", "task"])
# Confidences cluster at the gates, and failures are one answer in four, so that runs act often.
CONFIDENCES = st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.89, 0.9, 0.94, 0.95, 1.0]))
VERDICT = st.tuples(st.sampled_from([v.value for v in Verdict]), CONFIDENCES)
ANSWERS = st.one_of(VERDICT, VERDICT, VERDICT, st.sampled_from([FailureKind.TIMEOUT, FailureKind.MALFORMED]))
WRITE = st.tuples(st.just("write"), TEXTS, KINDS, st.booleans())
OPS = st.one_of(
    WRITE,
    WRITE,  # writes twice as likely as anything else
    st.tuples(st.just("cycle")),
    st.tuples(st.just("scan_last")),
    st.tuples(st.just("undo_last")),
    st.tuples(st.just("restore"), st.integers(0, 20)),
)
# A few writes first, so that there is something to pair, then anything.
STEPS = st.builds(lambda first, rest: first + rest, st.lists(WRITE, min_size=3, max_size=5), st.lists(OPS, max_size=8))


class Remembered:
    """The real model with a memory of what it embedded: the texts repeat, and each embedding costs ~50 ms."""

    def __init__(self, model: Embedder) -> None:
        self.model = model
        self.model_id = model.model_id
        self.dim = model.dim
        self.seen: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.seen]
        if missing:
            self.seen.update(zip(missing, self.model.embed(missing), strict=True))
        return np.stack([self.seen[t] for t in texts])


@pytest.fixture(scope="module")
def remembered(embedder: Embedder) -> Remembered:
    return Remembered(embedder)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS, answers=st.lists(ANSWERS, max_size=12), default=ANSWERS)
def test_hygiene_never_loses_a_memory(
    remembered: Remembered, steps: list[tuple[Any, ...]], answers: list[Any], default: Any
) -> None:
    judge = FakeJudge(answers, default=default)
    caller = Caller("alice", client="property")
    with tempfile.TemporaryDirectory(prefix="zm-hygiene-prop-") as home:
        app = build_app(
            Settings.from_environ({"ZM_HOME": home, "ZM_USER": "alice"}),
            embedder=remembered,
            judge_factory=lambda owner, run_id: judge,
        )
        try:
            with app.store.tx(write=True) as tx:
                add_user(tx, "alice", is_local=True)
            texts: dict[str, str] = {}
            runs: list[str] = []
            for step in steps:
                if step[0] == "write":
                    _, text, kind, provisional = step
                    request = RememberRequest(content=text, kind=kind, scope="personal", provisional=provisional)
                    result = remember(app, caller, request)
                    if result.status == "created":
                        texts[result.id] = text
                elif step[0] == "cycle":
                    run, _ = start_cycle(app, "alice", started_by="property", wait=True)
                    runs.append(run.id)
                elif step[0] == "scan_last" and texts:
                    with app.store.tx() as tx:
                        last = tx.get_memory(list(texts)[-1], SYSTEM)
                    assert last is not None
                    if last.live:
                        scan_written(app, last)
                elif step[0] == "undo_last" and runs:
                    undo_run(app, runs[-1], actor="alice", owner="alice")
                elif step[0] == "restore" and texts:
                    restore_memory(app, caller, list(texts)[step[1] % len(texts)])
                with app.store.tx() as tx:
                    rows = tx.get_memories(list(texts), SYSTEM)
                assert {mid: m.content for mid, m in rows.items()} == texts

            start_cycle(app, "alice", started_by="property", wait=True)  # one last sweep over what was written
            with app.store.tx() as tx:
                retired = [m for m in tx.get_memories(list(texts), SYSTEM).values() if not m.live]
            event(f"judge calls: {min(len(judge.requests), 3)}")
            event(f"memories created: {min(len(texts), 4)}")
            event(f"memories retired before the final restore: {'some' if retired else 'none'}")
            for memory_id, text in texts.items():
                restored = restore_memory(app, caller, memory_id)
                assert restored.status == "live"
                with app.store.tx() as tx:
                    back = tx.get_memory(memory_id, SYSTEM)
                assert back is not None and back.live and back.content == text and back.superseded_by is None
            for memory_id, text in texts.items():
                hits = recall(app, caller, text, scopes_arg=["*"], limit=50).hits
                assert memory_id in [hit.id for hit in hits], f"{text!r} is not recallable after its restore"
        finally:
            app.close()
