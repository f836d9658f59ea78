"""Anchors found in a memory's words: only files and symbols that exist, nothing ambiguous."""

from __future__ import annotations

from tests.workspace.gitrepo import GitRepo
from zero_memory.domain.anchors import Anchor
from zero_memory.workspace.git import Repository
from zero_memory.workspace.mentions import anchors_in


def repository(repo: GitRepo) -> Repository:
    found = Repository.at(repo.root)
    assert found is not None
    return found


def test_a_named_file_and_a_function_in_it(repo: GitRepo) -> None:
    repo.write("src/net/client.py", "def retry():\n    pass\n\n\ndef flush():\n    pass\n")
    repo.commit()
    content = "`retry()` in src/net/client.py backs off exponentially, capped at 30 s"
    assert anchors_in(content, repository(repo)) == [Anchor("src/net/client.py", "retry")]


def test_a_glob_that_names_one_file_and_a_file_without_symbols(repo: GitRepo) -> None:
    repo.write("db/0042_billing.sql", "create table billing();\n")
    repo.write("db/0041_users.sql", "create table users();\n")
    repo.commit()
    content = "the billing migration lives in db/0042_*.sql; users in db/00*.sql"
    assert anchors_in(content, repository(repo)) == [Anchor("db/0042_billing.sql")]


def test_a_symbol_without_a_file_is_anchored_only_where_one_file_defines_it(repo: GitRepo) -> None:
    repo.write("src/store.ts", "export function flush(): void {}\n")
    repo.write("src/util.py", "def helper():\n    flush()\n")  # mentions flush, defines nothing
    repo.write("src/a.py", "def render():\n    pass\n")
    repo.write("src/b.py", "def render():\n    pass\n")
    repo.commit()
    found = anchors_in("never call `flush()` inside a transaction; render() is pure", repository(repo))
    assert found == [Anchor("src/store.ts", "flush")]  # render is defined twice: left out


def test_names_that_do_not_exist_anchor_nothing(repo: GitRepo) -> None:
    repo.write("src/a.py", "X = 1\n")
    repo.commit()
    assert anchors_in("deploys happen on Tuesdays; see docs/ops.md and `ship()`", repository(repo)) == []


def test_a_qualified_method_that_reads_like_a_file_name(repo: GitRepo) -> None:
    repo.write("src/store.ts", "export class Store {\n  flush(): void {}\n}\n")
    repo.write("net/client.py", "def flush():\n    pass\n")
    repo.commit()
    found = anchors_in("never call `Store.flush` inside a transaction", repository(repo))
    assert found == [Anchor("src/store.ts", "Store.flush")]
