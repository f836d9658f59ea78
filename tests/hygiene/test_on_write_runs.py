"""Every automatic action belongs to a run: a write-triggered scan is a run of kind ``on_write`` whose
actions carry its id, found and undone by ``undo_run`` like a cycle's."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.hygiene.pipeline import BLUE, GREEN, factory, judge_by_pair
from tests.memory.helpers import write
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.hygiene.cycle import ON_WRITE
from zero_memory.hygiene.undo import undo_run
from zero_memory.store import SYSTEM, system_tx

MakeApp = Callable[..., App]


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_an_on_write_resolution_names_its_run_and_undoing_the_run_restores_it(
    make_app: MakeApp, alice: Caller, backend: str
) -> None:
    judge = judge_by_pair({(GREEN, BLUE): ("b_supersedes_a", 0.99)})
    app = make_app({"ZM_HYGIENE_ON_WRITE": "1"}, backend=backend, judge_factory=factory(judge))
    old = write(app, alice, GREEN).id
    app.wait_idle()
    new = write(app, alice, BLUE).id
    app.wait_idle()
    with system_tx(app.store, "test") as tx:
        loser = tx.get_memory(old, SYSTEM)
        resolved = [e for e in tx.audit_for_memory(old) if e.action == "hygiene.auto_resolve"]
        runs = [r for r in tx.list_runs(owner="alice") if r.kind == ON_WRITE]
    assert loser is not None and not loser.live and loser.superseded_by == new
    assert len(resolved) == 1 and resolved[0].run_id is not None
    run = next(r for r in runs if r.id == resolved[0].run_id)
    assert (run.kind, run.status.value, run.summary["auto_resolved"]) == (ON_WRITE, "completed", 1)

    report = undo_run(app, run.id, actor="alice", owner="alice")
    assert report.restored == [old]
    with system_tx(app.store, "test") as tx:
        back = tx.get_memory(old, SYSTEM)
    assert back is not None and back.live and back.restored


def test_a_write_with_nothing_to_judge_starts_no_run(make_app: MakeApp, alice: Caller) -> None:
    app = make_app({"ZM_HYGIENE_ON_WRITE": "1"}, judge_factory=factory(judge_by_pair()))
    write(app, alice, GREEN)
    write(app, alice, "Alice prefers tabs for indentation")
    app.wait_idle()
    with system_tx(app.store, "test") as tx:
        assert tx.list_runs(owner="alice") == []
