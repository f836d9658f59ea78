"""Property: a restored memory stays, and every automatic invalidation is undone by undoing its run.

Any sequence of writes, declared supersedes, restores, forgets, full cycles, write-triggered scans,
challenges, resolutions and undos, with a judge that keeps saying the newer memory replaces the older
(or that the two are duplicates), in process through the services:

- no step retires a memory someone restored, unless that step is a person's act naming it (a forget,
  a declared supersede, a resolution of a row about it);
- every memory an automatic step invalidates has an audit row naming the step's run;
- undoing, as ``zm hygiene undo`` does (``undo_run``), the run named by the audit row of each
  invalidation automation left standing brings every one of those memories back.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from zero_memory import errors
from zero_memory.access.caller import Caller
from zero_memory.access.users import add_user
from zero_memory.app import App
from zero_memory.bootstrap import build_app
from zero_memory.conflicts.challenge import challenge
from zero_memory.conflicts.choice import Choice, KeepBoth, Retire, Winner
from zero_memory.conflicts.resolve import resolve_conflict
from zero_memory.domain.memory import Memory
from zero_memory.domain.records import DisputeShape
from zero_memory.embedding import Embedder
from zero_memory.hygiene.cycle import scan_written, start_cycle
from zero_memory.hygiene.undo import UNDONE, undo_run
from zero_memory.judge.fake import FakeAnswer, FakeJudge
from zero_memory.judge.questions.loop_closure import LoopClosureRequest
from zero_memory.judge.questions.pair import PairRequest
from zero_memory.judge.questions.portability import PortabilityRequest
from zero_memory.memory.lifecycle import forget, restore_memory
from zero_memory.memory.models import RememberRequest
from zero_memory.memory.write import remember
from zero_memory.settings import Settings
from zero_memory.store import SYSTEM, system_tx
from zero_memory.store.ports.review import DisputeQuery

SUBJECTS = ["The staging database is {}", "Deploys go through the release pipeline on {}"]
VALUES = ["green", "blue", "red", "8080", "Fridays", "Mondays"]
TEXTS = st.builds(lambda subject, value: subject.format(value), st.sampled_from(SUBJECTS), st.sampled_from(VALUES))
KINDS = st.sampled_from(["fact", "fact", "episode", "decision", "task"])
# Adversarial: nearly always an action, at a confidence past every gate.
VERDICTS = st.sampled_from(["b_supersedes_a", "b_supersedes_a", "a_supersedes_b", "duplicate", "contradiction"])
INDEX = st.integers(0, 30)
WRITE = st.tuples(st.just("write"), TEXTS, KINDS, st.booleans(), st.sampled_from([None, "s1", "s1", "s2"]))
OPS = st.one_of(
    WRITE,
    st.tuples(st.just("supersede"), INDEX, TEXTS),
    st.tuples(st.just("supersede"), INDEX, TEXTS),
    st.tuples(st.just("restore"), INDEX),
    st.tuples(st.just("restore"), INDEX),
    st.tuples(st.just("restore"), INDEX),
    st.tuples(st.just("forget"), INDEX),
    st.tuples(st.just("cycle"), st.booleans()),
    st.tuples(st.just("cycle"), st.booleans()),
    st.tuples(st.just("on_write"), INDEX, st.booleans()),
    st.tuples(st.just("challenge"), INDEX),
    st.tuples(st.just("resolve"), INDEX, st.sampled_from(["keep_both", "a", "b", "retire"])),
    st.tuples(st.just("undo"), INDEX),
)
STEPS = st.builds(
    lambda first, rest: first + rest, st.lists(WRITE, min_size=2, max_size=4), st.lists(OPS, min_size=4, max_size=12)
)
ALICE = Caller("alice", client="property")


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


def adversary(verdicts: list[str]) -> FakeJudge:
    """A judge that cycles through confident verdicts; it closes every loop it is asked about."""
    turn = iter(range(10**6))

    def answer(request: Any) -> FakeAnswer:
        if isinstance(request, PortabilityRequest):
            return False
        if isinstance(request, LoopClosureRequest):
            return (True, 0.99)
        assert isinstance(request, PairRequest)
        return (verdicts[next(turn) % len(verdicts)], 0.99)

    return FakeJudge(answer)


def states(app: App, ids: Sequence[str]) -> dict[str, Memory]:
    with system_tx(app.store, "property") as tx:
        return tx.get_memories(ids, SYSTEM)


def automatic_rows(app: App, memory_id: str) -> list[Any]:
    """The automatic invalidations of a memory, oldest first: what ``undo_run`` undoes."""
    with system_tx(app.store, "property") as tx:
        trail = tx.audit_for_memory(memory_id)
    rows = [e for e in trail if e.action in UNDONE and e.actor.startswith("hygiene.") and e.memory_ids[-1] == memory_id]
    return sorted(rows, key=lambda e: e.seq)


class Model:
    """What the test did, and what automation left standing."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.ids: list[str] = []
        self.restored: set[str] = set()
        self.runs: list[str] = []
        # memory id -> the run whose automatic invalidation still stands
        self.left: dict[str, str] = {}

    def pick(self, index: int) -> str | None:
        return self.ids[index % len(self.ids)] if self.ids else None

    def write(self, text: str, kind: str, provisional: bool, session: str | None, links: list[Any]) -> None:
        caller = Caller("alice", client="property", session_id=session)
        request = RememberRequest(content=text, kind=kind, scope="personal", provisional=provisional, links=links)
        try:
            result = remember(self.app, caller, request)
        except errors.ZMError:
            return
        if result.id not in self.ids:
            self.ids.append(result.id)

    def pending(self) -> list[Any]:
        with system_tx(self.app.store, "property") as tx:
            return tx.list_disputes(DisputeQuery(owner="alice", limit=100))


def step(model: Model, op: tuple[Any, ...]) -> tuple[bool, set[str], str | None]:
    """Carry out one op; (automatic?, memories a person's act named, the run an automatic step made)."""
    app, kind = model.app, op[0]
    if kind == "write":
        _, text, memory_kind, provisional, session = op
        model.write(text, memory_kind, provisional, session, [])
        return False, set(), None
    if kind == "supersede":
        target = model.pick(op[1])
        if target is None:
            return False, set(), None
        model.write(op[2], "fact", False, None, [{"type": "supersedes", "dst": target}])
        return False, {target}, None
    if kind == "restore":
        # Restore one of the memories invalidated now (restoring a live one changes nothing).
        gone = [i for i, m in states(app, model.ids).items() if not m.live]
        if gone:
            target = sorted(gone)[op[1] % len(gone)]
            assert restore_memory(app, ALICE, target).changed
            model.restored.add(target)
        return False, set(), None
    if kind == "forget" and (target := model.pick(op[1])):
        forget(app, ALICE, target)
        return False, {target}, None
    if kind == "cycle":
        run, _ = start_cycle(app, "alice", started_by="property", wait=True, rejudge=op[1])
        model.runs.append(run.id)
        return True, set(), run.id
    if kind == "on_write" and (target := model.pick(op[1])):
        subject = states(app, [target])[target]
        run_id = scan_written(app, subject) if subject.live else None
        if run_id is not None:
            model.runs.append(run_id)
        return True, set(), run_id
    if kind == "challenge" and (target := model.pick(op[1])):
        with contextlib.suppress(errors.ZMError):
            challenge(app, ALICE, target, "It is wrong against the code.")
        return False, set(), None
    if kind == "resolve":
        rows = [d for d in model.pending() if d.pending]
        if not rows:
            return False, set(), None
        row = rows[op[1] % len(rows)]
        choice: Choice = KeepBoth()
        if op[2] == "retire" and row.shape is DisputeShape.SINGLE:
            choice = Retire()
        elif op[2] in ("a", "b") and row.shape is DisputeShape.PAIR:
            assert row.memory_b is not None
            choice = Winner(row.memory_a if op[2] == "a" else row.memory_b)
        with contextlib.suppress(errors.ZMError):
            resolve_conflict(app, ALICE, row.id, choice)
        return False, {row.memory_a, *([row.memory_b] if row.memory_b else [])}, None
    if kind == "undo" and model.runs:
        report = undo_run(app, model.runs[op[1] % len(model.runs)], actor="alice", owner="alice")
        model.restored.update(report.restored)
    return False, set(), None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS, verdicts=st.lists(VERDICTS, min_size=1, max_size=6))
def test_a_restored_memory_stays_and_every_automatic_invalidation_is_undone_by_its_run(
    remembered: Remembered, steps: list[tuple[Any, ...]], verdicts: list[str]
) -> None:
    judge = adversary(verdicts)
    with tempfile.TemporaryDirectory(prefix="zm-restored-prop-") as home:
        app = build_app(
            Settings.from_environ({"ZM_HOME": home, "ZM_USER": "alice"}),
            embedder=remembered,
            judge_factory=lambda owner, run_id: judge,
        )
        try:
            with system_tx(app.store, "property", write=True) as tx:
                add_user(tx, "alice", is_local=True)
            model = Model(app)
            for op in steps:
                before = states(app, model.ids)
                automatic, named, run_id = step(model, op)
                after = states(app, model.ids)
                for memory_id, now in after.items():
                    was = before.get(memory_id)
                    if was is None or (was.status, was.superseded_by, was.updated_at) == (
                        now.status,
                        now.superseded_by,
                        now.updated_at,
                    ):
                        continue
                    model.left.pop(memory_id, None)  # whatever automation left, something changed it since
                    if not (was.live and not now.live):
                        continue
                    # A restored memory is retired only by a person's act that names it.
                    assert memory_id not in model.restored or memory_id in named, (op, memory_id)
                    if automatic:
                        rows = automatic_rows(app, memory_id)
                        assert rows and rows[-1].run_id == run_id, (op, memory_id, rows)
                        model.left[memory_id] = run_id
            event(f"automatic invalidations standing: {min(len(model.left), 3)}")
            event(f"restored memories: {min(len(model.restored), 3)}")
            for memory_id, run_id in model.left.items():
                rows = automatic_rows(app, memory_id)
                assert rows and rows[-1].run_id == run_id
            for run_id in dict.fromkeys(model.left.values()):
                undo_run(app, run_id, actor="alice")  # as ``zm hygiene undo RUN`` calls it
            back = states(app, list(model.left))
            assert all(m.live for m in back.values()), {i: m.invalidated_reason for i, m in back.items() if not m.live}
        finally:
            app.close()
