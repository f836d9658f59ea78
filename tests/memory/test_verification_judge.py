"""Verification with a judge (the fake): a change the judge is sure leaves the memory true re-anchors it with
no row; one it says makes the memory untrue queues an authoritative memory with the rationale and retires a
provisional one in an undoable run; no verdict (offer mode, a failure) queues, as without a judge."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hygiene.pipeline import factory
from tests.workspace.gitrepo import GitRepo
from zero_memory.access.caller import Caller
from zero_memory.access.projects import create_project
from zero_memory.app import App
from zero_memory.domain.anchors import AnchorState
from zero_memory.domain.memory import Kind, Status
from zero_memory.hygiene.undo import undo_run
from zero_memory.judge.base import FailureKind
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
CLIENT = "def retry(attempts):\n    return min(2**attempts, 30)\n"


def setup(make_app: Callable[..., App], tmp_path: Path, judge: FakeJudge) -> tuple[App, GitRepo]:
    app = make_app(judge_factory=factory(judge))
    repo = GitRepo(tmp_path / "api")
    repo.write("net/client.py", CLIENT)
    repo.commit("first")
    with system_tx(app.store, "test", write=True) as tx:
        create_project(tx, "alice", "api", path=str(repo.root))
    return app, repo


def anchored(app: App, text: str, *, provisional: bool = False) -> str:
    request = RememberRequest(
        content=text,
        kind=Kind.FACT,
        scope="proj.alice.api",
        provisional=provisional,
        anchors=[AnchorSpec(path="net/client.py", symbol="retry")],
    )
    return remember(app, ALICE, request).id


def change_and_verify(app: App, repo: GitRepo) -> dict[str, object]:
    repo.write("net/client.py", CLIENT.replace("30)", "60)"))
    repo.commit("raise the cap")
    return verify(app, repo)


def verify(app: App, repo: GitRepo) -> dict[str, object]:
    commit = repo.git("rev-parse", "HEAD").strip()
    repository = Repository.at(repo.root)
    assert repository is not None
    records = anchors_of_project(app, ALICE, "proj.alice.api")
    reports = [Report(r, o) for r, o in Checker(repository).check_all(records)]
    return apply(app, ALICE, "proj.alice.api", reports, target=commit, repository="example").model_dump()


def code_change(answer: object) -> Callable[[object], object]:
    return lambda request: answer if isinstance(request, CodeChangeRequest) else "unrelated"


def test_still_true_re_anchors_without_a_row(make_app: Callable[..., App], tmp_path: Path) -> None:
    judge = FakeJudge(code_change((True, 0.95)))
    app, repo = setup(make_app, tmp_path, judge)
    memory_id = anchored(app, "retry backs off exponentially")
    result = change_and_verify(app, repo)
    assert (result["raised"], result["judged_still_true"]) == (0, 1)
    shown = get_memory(app, ALICE, memory_id)
    assert shown.disputes == [] and shown.anchors[0].state == AnchorState.VERIFIED.value
    accept = next(a for a in shown.audit if a.action == "anchor.accept")
    assert accept.payload["verdict"] == "still_true" and accept.payload["model"] == "fake-strong"
    assert [type(r) for r in judge.requests] == [CodeChangeRequest]
    again = verify(app, repo)  # the same code: nothing to ask, nothing raised
    assert again["raised"] == 0 and len(judge.requests) == 1


def test_no_longer_true_queues_an_authoritative_memory_with_the_rationale(
    make_app: Callable[..., App], tmp_path: Path
) -> None:
    app, repo = setup(make_app, tmp_path, FakeJudge(code_change((False, 0.99))))
    memory_id = anchored(app, "retry caps at 30 s")
    result = change_and_verify(app, repo)
    assert (result["raised"], result["retired"]) == (1, 0)
    shown = get_memory(app, ALICE, memory_id)
    assert shown.memory.status == Status.LIVE.value and [d.verdict for d in shown.disputes] == ["outdated"]


def test_no_longer_true_retires_a_provisional_memory_in_an_undoable_run(
    make_app: Callable[..., App], tmp_path: Path
) -> None:
    judge = FakeJudge(code_change((False, 0.99)))
    app, repo = setup(make_app, tmp_path, judge)
    memory_id = anchored(app, "retry caps at 30 s", provisional=True)
    result = change_and_verify(app, repo)
    assert (result["raised"], result["retired"]) == (0, 1)
    assert judge.model_for(judge.requests[0]) == "fake-fast"  # a provisional memory: the fast model
    shown = get_memory(app, ALICE, memory_id)
    assert shown.memory.status == Status.INVALIDATED.value
    retired = next(a for a in shown.audit if a.action == "verify.retire")
    assert retired.run_id and retired.payload["verdict"] == "no_longer_true"
    report = undo_run(app, retired.run_id, actor="alice", owner="alice")
    assert report.restored == [memory_id]
    assert get_memory(app, ALICE, memory_id).memory.status == Status.LIVE.value


@pytest.mark.parametrize("answer", [(True, 0.6), FailureKind.TIMEOUT])
def test_an_unsure_or_failed_judge_queues(make_app: Callable[..., App], tmp_path: Path, answer: object) -> None:
    app, repo = setup(make_app, tmp_path, FakeJudge(code_change(answer)))
    memory_id = anchored(app, "retry caps at 30 s", provisional=True)
    result = change_and_verify(app, repo)
    assert (result["raised"], result["retired"], result["judged_still_true"]) == (1, 0, 0)
    assert get_memory(app, ALICE, memory_id).memory.status == Status.LIVE.value
