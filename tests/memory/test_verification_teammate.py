"""Verification by a teammate: alice verifies her project, where bob remembered anchored memories. What it
changes of bob's memories belongs to a run of bob's (``zm hygiene undo`` is his), on both stores: on
PostgreSQL the run and its audit rows are written in alice's transaction, under the row policies."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hygiene.pipeline import factory
from tests.workspace.gitrepo import GitRepo
from zero_memory.access.caller import Caller
from zero_memory.access.projects import create_project
from zero_memory.app import App
from zero_memory.clock import utcnow
from zero_memory.domain.memory import Kind, Status
from zero_memory.domain.scopes import Role
from zero_memory.hygiene.undo import undo_run
from zero_memory.judge.fake import FakeJudge
from zero_memory.judge.questions.code_change import CodeChangeRequest
from zero_memory.memory.lifecycle import get_memory
from zero_memory.memory.models import AnchorSpec, RememberRequest
from zero_memory.memory.verification import Report, anchors_of_project, apply
from zero_memory.memory.write import remember
from zero_memory.store import system_tx
from zero_memory.workspace.check import Checker
from zero_memory.workspace.git import Repository

ALICE = Caller("alice", client="pytest", session_id="s1")
BOB = Caller("bob", client="pytest", session_id="s2")
SCOPE = "proj.alice.api"
CLIENT = "def retry(attempts):\n    return min(2**attempts, 30)\n\n\ndef timeout():\n    return 10\n"


@pytest.fixture(params=["sqlite", "postgres"])
def team(request: pytest.FixtureRequest, make_app: Callable[..., App], tmp_path: Path) -> tuple[App, GitRepo]:
    """Alice's project, bob (a user of the test apps) a writer in it; the judge sure that retry's change
    leaves a memory true and that timeout's makes it untrue."""

    def answer(request: object) -> object:
        if not isinstance(request, CodeChangeRequest):
            return "unrelated"
        return (True, 0.95) if "retry" in request.anchor else (False, 0.95)

    app = make_app(judge_factory=factory(FakeJudge(answer)), backend=request.param)
    repo = GitRepo(tmp_path / "api")
    repo.write("net/client.py", CLIENT)
    repo.commit("first")
    with system_tx(app.store, "test", write=True) as tx:
        create_project(tx, "alice", "api", path=str(repo.root))
        tx.set_membership(SCOPE, "bob", Role.WRITER.value, utcnow())
    return app, repo


def bobs(app: App, text: str, symbol: str, *, provisional: bool = False) -> str:
    anchors = [AnchorSpec(path="net/client.py", symbol=symbol)]
    request = RememberRequest(content=text, kind=Kind.FACT, scope=SCOPE, provisional=provisional, anchors=anchors)
    return remember(app, BOB, request).id


def test_alice_verifying_changes_bobs_memories_in_a_run_bob_can_undo(team: tuple[App, GitRepo]) -> None:
    app, repo = team
    upheld = bobs(app, "retry backs off exponentially", "retry")
    retired = bobs(app, "timeout() waits ten seconds", "timeout", provisional=True)
    repo.write("net/client.py", CLIENT.replace("30)", "60)").replace("return 10", "return 20"))
    repo.commit("new limits")
    repository = Repository.at(repo.root)
    assert repository is not None
    records = anchors_of_project(app, ALICE, SCOPE)
    reports = [Report(r, o) for r, o in Checker(repository).check_all(records)]
    result = apply(app, ALICE, SCOPE, reports, target=repo.git("rev-parse", "HEAD").strip(), repository="example")
    assert (result.judged_still_true, result.retired, result.raised) == (1, 1, 0)
    assert get_memory(app, BOB, retired).memory.status == Status.INVALIDATED
    assert get_memory(app, BOB, upheld).memory.status == Status.LIVE

    with system_tx(app.store, "test") as tx:
        runs = [run for run in tx.list_runs(owner="bob") if run.kind == "verify"]
    assert [(run.owner, run.started_by) for run in runs] == [("bob", "alice")]
    undo_run(app, runs[0].id, actor="bob", owner="bob")
    assert get_memory(app, BOB, retired).memory.status == Status.LIVE
