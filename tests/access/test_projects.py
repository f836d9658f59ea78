"""Project hints: paths, remotes, names, auto-creation, and whose projects they may name."""

from __future__ import annotations

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


def test_a_path_hint_creates_a_project_once_and_subdirectories_find_it(app: App, tmp_path: Path) -> None:
    repo = tmp_path / "Billing Service"
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
