"""Project hints: paths, remotes, names, auto-creation, and whose projects they may name."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from zero_memory import errors
from zero_memory.access.projects import create_project, normalize_remote, resolve_hint
from zero_memory.access.visibility import visibility
from zero_memory.app import App


@pytest.mark.parametrize(
    "remote",
    [
        "git@github.com:Acme/Widgets.git",
        "https://github.com/acme/widgets",
        "https://user@github.com/acme/widgets.git/",
        "ssh://git@github.com/acme/widgets.git",
    ],
)
def test_remote_spellings_normalize_to_one_name(remote: str) -> None:
    assert normalize_remote(remote) == "github.com/acme/widgets"


def resolve(app: App, uid: str, hint: str, *, auto_create: bool = True) -> tuple[str, bool]:
    with app.store.tx(write=True) as tx:
        result = resolve_hint(tx, visibility(tx, uid), hint, auto_create=auto_create)
    return result.scope, result.created


def git_repo(path: Path, remote: str | None = None) -> Path:
    """A repository as ``git init`` (and ``git remote add origin``) leaves it, as far as a hint reads it."""
    (path / ".git").mkdir(parents=True)
    (path / ".git" / "config").write_text(f'[remote "origin"]\n\turl = {remote}\n' if remote else "[core]\n")
    return path


def worktree_of(repo: Path, path: Path) -> Path:
    """A worktree as ``git worktree add`` leaves it: a .git file pointing into the repository's .git."""
    gitdir = repo / ".git" / "worktrees" / path.name
    gitdir.mkdir(parents=True)
    (gitdir / "commondir").write_text("../..\n")
    path.mkdir(parents=True)
    (path / ".git").write_text(f"gitdir: {gitdir}\n")
    return path


def test_a_path_hint_creates_a_project_once_and_subdirectories_find_it(app: App, tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "Billing Service")
    (repo / "src").mkdir(parents=True)
    assert resolve(app, "alice", str(repo)) == ("proj.alice.billing-service", True)
    assert resolve(app, "alice", str(repo)) == ("proj.alice.billing-service", False)
    assert resolve(app, "alice", str(repo / "src")) == ("proj.alice.billing-service", False)


def test_a_path_hint_finds_the_project_of_its_git_remote(app: App, tmp_path: Path) -> None:
    with app.store.tx(write=True) as tx:
        create_project(tx, "alice", "widgets", remote="git@github.com:acme/widgets.git")
    clone = tmp_path / "checkout-2"
    (clone / ".git").mkdir(parents=True)
    (clone / ".git" / "config").write_text('[remote "origin"]\n\turl = https://github.com/acme/widgets\n')
    assert resolve(app, "alice", str(clone)) == ("proj.alice.widgets", False)


def test_a_name_hint_prefers_the_callers_own_project(app: App) -> None:
    with app.store.tx(write=True) as tx:
        create_project(tx, "bob", "api")
    assert resolve(app, "alice", "api") == ("proj.alice.api", True)
    assert resolve(app, "bob", "api") == ("proj.bob.api", False)


def test_two_users_projects_with_one_name_are_different_scopes(app: App) -> None:
    assert resolve(app, "alice", "git@github.com:acme/api.git")[0] == "proj.alice.api"
    assert resolve(app, "bob", "git@github.com:acme/api.git")[0] == "proj.bob.api"


def test_without_auto_create_an_unknown_hint_is_unresolvable(app: App) -> None:
    with pytest.raises(errors.ZMError, match=r"^validation_failed: project_hint_unresolvable:"):
        resolve(app, "alice", "/nowhere/at/all", auto_create=False)


@pytest.mark.parametrize("hint", ["", "   ", "a\x00b"])
def test_a_malformed_hint_is_unresolvable(app: App, hint: str) -> None:
    with pytest.raises(errors.ZMError, match=r"^validation_failed: project_hint_unresolvable:"):
        resolve(app, "alice", hint)


BACKENDS = ["sqlite", "postgres"]


@pytest.fixture(params=BACKENDS)
def each_store(request: pytest.FixtureRequest, make_app: Callable[..., App]) -> App:
    return make_app(backend=request.param)


def test_two_repositories_with_one_folder_name_are_two_projects(each_store: App, tmp_path: Path) -> None:
    first = git_repo(tmp_path / "work" / "api")
    second = git_repo(tmp_path / "other" / "api", remote="git@github.com:acme/api.git")
    assert resolve(each_store, "alice", str(first)) == ("proj.alice.api", True)
    assert resolve(each_store, "alice", str(second)) == ("proj.alice.api-2", True)
    assert resolve(each_store, "alice", str(second / "src")) == ("proj.alice.api-2", False)
    assert resolve(each_store, "alice", str(first)) == ("proj.alice.api", False)
    with each_store.store.tx() as tx:
        tx.act_as("alice")
        project = tx.get_project("proj.alice.api-2")
    assert project is not None and (project.path, project.remote) == (str(second), "github.com/acme/api")


def test_a_clone_elsewhere_of_one_remote_is_one_project_and_a_fork_another(each_store: App, tmp_path: Path) -> None:
    original = git_repo(tmp_path / "work" / "api", remote="git@github.com:acme/api.git")
    clone = git_repo(tmp_path / "laptop" / "api", remote="https://github.com/Acme/api")
    fork = git_repo(tmp_path / "forks" / "api", remote="git@github.com:someone/api.git")
    assert resolve(each_store, "alice", str(original)) == ("proj.alice.api", True)
    assert resolve(each_store, "alice", str(clone)) == ("proj.alice.api", False)
    assert resolve(each_store, "alice", str(fork)) == ("proj.alice.api-2", True)


def test_a_worktree_is_its_repositorys_project(each_store: App, tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "api")
    worktree = worktree_of(repo, tmp_path / "api-feature")
    without_remote = resolve(each_store, "alice", str(worktree))
    assert without_remote == ("proj.alice.api", True)
    assert resolve(each_store, "alice", str(repo)) == ("proj.alice.api", False)
    remote = git_repo(tmp_path / "svc", remote="git@github.com:acme/svc.git")
    assert resolve(each_store, "alice", str(worktree_of(remote, tmp_path / "svc-fix" / "svc"))) == (
        "proj.alice.svc",
        True,
    )


def test_a_directory_in_no_repository_names_no_project_and_creates_none(each_store: App, tmp_path: Path) -> None:
    downloads = tmp_path / "Downloads"
    downloads.mkdir()
    with pytest.raises(errors.ZMError, match=r"^validation_failed: project_hint_unresolvable: .*scope \"personal\""):
        resolve(each_store, "alice", str(downloads))
    with each_store.store.tx() as tx:
        tx.act_as("alice")
        assert tx.list_projects() == []


def test_existing_projects_are_matched_not_duplicated(each_store: App, tmp_path: Path) -> None:
    """A store from before: projects by path (a directory that is no repository), by remote, by name only."""
    notes = tmp_path / "notes"
    notes.mkdir()
    repo = git_repo(tmp_path / "web", remote="git@github.com:acme/web.git")
    with each_store.store.tx(write=True) as tx:
        tx.act_as("alice")
        create_project(tx, "alice", "notes", path=str(notes))
        create_project(tx, "alice", "web", remote="https://github.com/acme/web")
        create_project(tx, "alice", "api")
    assert resolve(each_store, "alice", str(notes / "drafts")) == ("proj.alice.notes", False)
    assert resolve(each_store, "alice", str(repo)) == ("proj.alice.web", False)
    assert resolve(each_store, "alice", str(git_repo(tmp_path / "api"))) == ("proj.alice.api", False)
    with each_store.store.tx() as tx:
        tx.act_as("alice")
        assert len(tx.list_projects()) == 3


def test_a_path_of_another_machine_keeps_its_folder_name_and_two_are_two(each_store: App) -> None:
    assert resolve(each_store, "alice", "/home/someone/work/api") == ("proj.alice.api", True)
    assert resolve(each_store, "alice", "/home/someone/clients/acme/api") == ("proj.alice.api-2", True)
    assert resolve(each_store, "alice", "/home/someone/work/api/src") == ("proj.alice.api", False)
