"""``zm verify`` as a subprocess on real git repositories: anchors followed, changes and deletions raised as
one ``outdated`` row each, nothing raised twice, nothing read that git did not name."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.cli.harness import ZM, Zm, environ
from tests.workspace.gitrepo import ENV as GIT_ENV
from tests.workspace.gitrepo import GitRepo

CLIENT = '''def retry(attempts):
    """Back off exponentially."""
    return min(2**attempts, 30)


def flush():
    pass
'''

STORE_TS = """export class Store {
  flush(): void {
    this.pending = [];
  }
}
"""


@pytest.fixture
def zm_repo(tmp_path: Path) -> tuple[Zm, GitRepo]:
    repo = GitRepo(tmp_path / "api")
    repo.write("net/client.py", CLIENT)
    repo.write("src/store.ts", STORE_TS)
    repo.write("README.md", "# api\n")
    repo.commit("first")
    zm = Zm(
        {"ZM_HOME": str(tmp_path / "zm-home"), "ZM_EMBEDDING_MODEL": "hash:512", "COLUMNS": "200", **GIT_ENV},
        binary=True,
    )
    assert zm("project", "create", "api", "--path", str(repo.root)).exit_code == 0
    return zm, repo


def remember(zm: Zm, repo: GitRepo, text: str, *anchors: str) -> dict[str, Any]:
    args = ["remember", text, "--kind", "fact", "--project", str(repo.root), "--json"]
    for anchor in anchors:
        args += ["--anchor", anchor]
    done = zm(*args)
    assert done.exit_code == 0, done.stderr
    return dict(done.json())


def verify(zm: Zm, repo: GitRepo) -> dict[str, Any]:
    done = zm("verify", str(repo.root), "--json")
    assert done.exit_code == 0, done.stderr
    return dict(done.json())


def outdated_rows(zm: Zm) -> list[dict[str, Any]]:
    done = zm("conflicts", "list", "--json")
    assert done.exit_code == 0, done.stderr
    return [row for row in done.json()["conflicts"] if row["verdict"] == "outdated"]


def test_a_changed_function_raises_one_outdated_row_with_its_diff(zm_repo: tuple[Zm, GitRepo]) -> None:
    zm, repo = zm_repo
    memory = remember(zm, repo, "retry backs off exponentially, capped at 30 s", "net/client.py::retry")
    assert [(a["path"], a["symbol"], a["state"]) for a in memory["anchors"]] == [("net/client.py", "retry", "verified")]
    repo.write("net/client.py", CLIENT.replace("30)", "60)"))
    changed_at = repo.commit("raise the cap")

    first = verify(zm, repo)
    assert (first["raised"], first["anchors"], first["files_read"]) == (1, 1, 1)
    [row] = outdated_rows(zm)
    assert row["memory_a"]["id"] == memory["id"]
    assert "-    return min(2**attempts, 30)" in row["reason"] and "+    return min(2**attempts, 60)" in row["reason"]
    assert changed_at[:12] in row["reason"]

    again = verify(zm, repo)  # nothing new: the row is the row
    assert (again["raised"], again["updated_rows"]) == (0, 0) and len(outdated_rows(zm)) == 1
    repo.write("net/client.py", CLIENT.replace("30)", "90)"))
    repo.commit("and again")
    later = verify(zm, repo)  # the code kept changing: one row, its evidence brought up to date
    assert (later["raised"], later["updated_rows"]) == (0, 1)
    [row] = outdated_rows(zm)
    assert "+    return min(2**attempts, 90)" in row["reason"]

    shown = zm("get", memory["id"], "--json").json()
    assert shown["anchors"][0]["state"] == "changed" and shown["anchors"][0]["drift"]
    hits = zm("recall", "retry backs off", "--project", str(repo.root), "--json").json()["hits"]
    hit = next(h for h in hits if h["id"] == memory["id"])
    assert hit["anchors"] == ["net/client.py::retry"] and hit["code_changed"] == shown["anchors"][0]["drift"]


def test_git_mv_is_followed_without_a_row(zm_repo: tuple[Zm, GitRepo]) -> None:
    zm, repo = zm_repo
    memory = remember(zm, repo, "retry backs off", "net/client.py::retry")
    repo.git("mv", "net/client.py", "net/http_client.py")
    repo.commit("rename")
    done = verify(zm, repo)
    assert (done["reanchored"], done["raised"]) == (1, 0)
    assert outdated_rows(zm) == []
    shown = zm("get", memory["id"], "--json").json()
    assert [(a["path"], a["state"]) for a in shown["anchors"]] == [("net/http_client.py", "verified")]
    move = next(entry for entry in shown["audit"] if entry["action"] == "anchor.move")  # the old place on record
    assert move["run_id"] and move["payload"]["from"] == "net/client.py::retry"

    undone = zm("hygiene", "undo", move["run_id"], "--json")  # reversible: the anchor goes back
    assert undone.exit_code == 0, undone.stderr
    assert undone.json()["anchors_moved_back"] == 1
    back = zm("get", memory["id"], "--json").json()
    assert [(a["path"], a["symbol"]) for a in back["anchors"]] == [("net/client.py", "retry")]
    assert verify(zm, repo)["reanchored"] == 1  # and the next verification follows the code again


def test_a_deleted_symbol_raises_a_row_saying_so(zm_repo: tuple[Zm, GitRepo]) -> None:
    zm, repo = zm_repo
    remember(zm, repo, "flush is a no-op", "net/client.py::flush")
    repo.write("net/client.py", CLIENT.split("\n\n\ndef flush")[0] + "\n")
    repo.commit("drop flush")
    assert verify(zm, repo)["raised"] == 1
    [row] = outdated_rows(zm)
    assert "gone" in row["reason"] and "symbol not found" in row["reason"]


def test_nothing_changed_raises_nothing_and_reads_nothing(zm_repo: tuple[Zm, GitRepo]) -> None:
    zm, repo = zm_repo
    remember(zm, repo, "retry backs off", "net/client.py::retry")
    repo.write("README.md", "# api\n\nmore words\n")
    repo.commit("docs")
    for _ in range(2):
        done = verify(zm, repo)
        assert (done["raised"], done["files_read"], done["reanchored"]) == (0, 0, 0)
    assert outdated_rows(zm) == []


def test_anchors_are_found_in_the_content_in_python_and_typescript(zm_repo: tuple[Zm, GitRepo]) -> None:
    zm, repo = zm_repo
    python = remember(zm, repo, "`retry()` in net/client.py backs off exponentially")
    typescript = remember(zm, repo, "never call `Store.flush` inside a transaction: it drops pending writes")
    assert [(a["path"], a["symbol"], a["origin"]) for a in python["anchors"]] == [
        ("net/client.py", "retry", "automatic")
    ]
    assert [(a["path"], a["symbol"], a["origin"]) for a in typescript["anchors"]] == [
        ("src/store.ts", "Store.flush", "automatic")
    ]
    repo.write("src/store.ts", STORE_TS.replace("[]", "null"))
    repo.commit("flush keeps nothing")
    done = verify(zm, repo)
    assert done["raised"] == 1
    [row] = outdated_rows(zm)
    assert row["memory_a"]["id"] == typescript["id"] and "+    this.pending = null;" in row["reason"]


def test_a_named_anchor_that_does_not_exist_is_refused(zm_repo: tuple[Zm, GitRepo]) -> None:
    zm, repo = zm_repo
    done = zm(
        "remember", "x backs off", "--kind", "fact", "--project", str(repo.root), "--anchor", "net/client.py::nope"
    )
    assert done.exit_code != 0 and done.stderr.startswith("validation_failed: anchors:")
    outside = zm("verify", str(repo.root.parent))
    assert outside.exit_code != 0 and outside.stderr.startswith("validation_failed:")


def test_setup_git_installs_hooks_that_verify_after_each_commit(zm_repo: tuple[Zm, GitRepo]) -> None:
    zm, repo = zm_repo
    memory = remember(zm, repo, "retry caps at 30 s", "net/client.py::retry")
    hooks = repo.root / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    (hooks / "post-merge").write_text("#!/bin/sh\necho the user's own hook\n")
    env = environ(zm.env)
    first = subprocess.run([str(ZM), "setup", "git"], cwd=repo.root, env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert {line.split(":")[0] for line in first.stdout.splitlines()} == {"added"}
    assert "echo the user's own hook" in (hooks / "post-merge").read_text()  # theirs kept, ours appended
    again = subprocess.run([str(ZM), "setup", "git"], cwd=repo.root, env=env, capture_output=True, text=True)
    assert {line.split(":")[0] for line in again.stdout.splitlines()} == {"unchanged"}

    repo.write("net/client.py", CLIENT.replace("30)", "60)"))
    repo.commit("raise the cap")  # post-commit runs zm verify --hook in the background
    deadline = time.monotonic() + 90
    while not outdated_rows(zm) and time.monotonic() < deadline:
        time.sleep(0.5)
    [row] = outdated_rows(zm)
    assert row["memory_a"]["id"] == memory["id"]
    log = zm("capture", "log")
    assert "verify proj." in log.stdout and "1 outdated raised" in log.stdout


def test_the_session_start_briefing_verifies_first_and_lists_what_changed(zm_repo: tuple[Zm, GitRepo]) -> None:
    zm, repo = zm_repo
    memory = remember(zm, repo, "retry caps at 30 s", "net/client.py::retry")
    repo.write("net/client.py", CLIENT.replace("30)", "60)"))
    repo.commit("raise the cap")
    answer = zm("context", "--hook", input=json.dumps({"cwd": str(repo.root), "session_id": "s-1"}))
    assert answer.exit_code == 0, answer.stderr
    text = answer.json()["hookSpecificOutput"]["additionalContext"]
    assert "## Code changed since verified" in text
    assert memory["id"] in text.split("## Code changed since verified")[1]


def test_the_first_write_that_creates_the_project_anchors_too(tmp_path: Path) -> None:
    """As a user starts: no ``zm project create``, the project made by the hint of this very write."""
    repo = GitRepo(tmp_path / "shop")
    repo.write("net/client.py", CLIENT)
    repo.commit("first")
    zm = Zm({"ZM_HOME": str(tmp_path / "zm-home"), "ZM_EMBEDDING_MODEL": "hash:512", **GIT_ENV}, binary=True)
    first = remember(zm, repo, "`retry()` in net/client.py caps at 30 s")
    assert first["scope"].startswith("proj.") and first["scope"].endswith(".shop")
    assert [(a["path"], a["symbol"], a["origin"]) for a in first["anchors"]] == [
        ("net/client.py", "retry", "automatic")
    ]
    repo.write("net/client.py", CLIENT.replace("30)", "60)"))
    repo.commit("raise the cap")
    assert verify(zm, repo)["raised"] == 1
