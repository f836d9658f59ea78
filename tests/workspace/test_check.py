"""Verifying anchors against real git repositories: unchanged, moved, changed, gone, and what it reads."""

from __future__ import annotations

from dataclasses import replace

from tests.workspace.gitrepo import GitRepo
from zero_memory.domain.anchors import (
    AnchorRecord,
    AnchorState,
    Changed,
    Gone,
    Moved,
    Origin,
    Unchanged,
    region_hash,
)
from zero_memory.workspace import symbols
from zero_memory.workspace.check import Checker
from zero_memory.workspace.git import Repository

CLIENT = """def retry(attempts):
    return min(2**attempts, 30)


def flush():
    pass
"""


def verified(repo: GitRepo, path: str, symbol: str | None, commit: str) -> AnchorRecord:
    text = (repo.root / path).read_text()
    region = symbols.find(path, text, symbol).text if symbol else text  # type: ignore[union-attr]
    return AnchorRecord(
        memory_id="mem_1",
        path=path,
        symbol=symbol,
        origin=Origin.EXPLICIT,
        state=AnchorState.VERIFIED,
        repository=None,
        commit=commit,
        content_hash=region_hash(region),
        verified_at=None,
    )


def checker(repo: GitRepo) -> Checker:
    found = Repository.at(repo.root)
    assert found is not None
    return Checker(found)


def test_nothing_changed_reads_nothing(repo: GitRepo) -> None:
    repo.write("net/client.py", CLIENT)
    repo.write("other.py", "X = 1\n")
    commit = repo.commit()
    repo.write("other.py", "X = 2\n")
    repo.commit()
    check = checker(repo)
    record = verified(repo, "net/client.py", "retry", commit)
    assert check.check(record) == Unchanged(record.content_hash or "")
    assert check.files_read == 0


def test_a_change_elsewhere_in_the_file_leaves_the_symbol_unchanged(repo: GitRepo) -> None:
    repo.write("net/client.py", CLIENT)
    commit = repo.commit()
    repo.write("net/client.py", CLIENT.replace("    pass", "    return None"))
    repo.commit()
    record = verified(repo, "net/client.py", "retry", commit)
    assert checker(repo).check(record) == Unchanged(record.content_hash or "")


def test_a_changed_function_comes_with_its_diff(repo: GitRepo) -> None:
    repo.write("net/client.py", CLIENT)
    commit = repo.commit()
    record = verified(repo, "net/client.py", "retry", commit)
    repo.write("net/client.py", CLIENT.replace("30)", "60)"))
    repo.commit()
    outcome = checker(repo).check(record)
    assert isinstance(outcome, Changed)
    assert (outcome.path, outcome.symbol) == ("net/client.py", "retry")
    assert "-    return min(2**attempts, 30)" in outcome.diff
    assert "+    return min(2**attempts, 60)" in outcome.diff
    assert outcome.content_hash != record.content_hash


def test_uncommitted_changes_count_in_the_working_tree_not_at_a_commit(repo: GitRepo) -> None:
    repo.write("net/client.py", CLIENT)
    commit = repo.commit()
    record = verified(repo, "net/client.py", "retry", commit)
    repo.write("net/client.py", CLIENT.replace("30)", "60)"))
    found = Repository.at(repo.root)
    assert found is not None
    assert isinstance(Checker(found).check(record), Changed)
    assert isinstance(Checker(found, target=commit).check(record), Unchanged)


def test_git_mv_is_followed(repo: GitRepo) -> None:
    repo.write("net/client.py", CLIENT)
    commit = repo.commit()
    record = verified(repo, "net/client.py", "retry", commit)
    repo.git("mv", "net/client.py", "net/http_client.py")
    repo.commit()
    assert checker(repo).check(record) == Moved("net/http_client.py", "retry", record.content_hash or "")


def test_a_function_moved_to_another_file_is_found_there(repo: GitRepo) -> None:
    repo.write("net/client.py", CLIENT)
    commit = repo.commit()
    record = verified(repo, "net/client.py", "retry", commit)
    repo.write("net/client.py", "def flush():\n    pass\n")
    repo.write("net/backoff.py", "def retry(attempts):\n    return min(2**attempts, 30)\n")
    repo.commit()
    assert checker(repo).check(record) == Moved("net/backoff.py", "retry", record.content_hash or "")


def test_deleted_symbol_and_deleted_file_are_gone(repo: GitRepo) -> None:
    repo.write("net/client.py", CLIENT)
    repo.write("net/old.py", "LIMIT = 3\n")
    commit = repo.commit()
    symbol = verified(repo, "net/client.py", "retry", commit)
    file = verified(repo, "net/old.py", None, commit)
    repo.write("net/client.py", "def flush():\n    pass\n")
    repo.git("rm", "-q", "net/old.py")
    repo.commit()
    check = checker(repo)
    assert check.check(symbol) == Gone("symbol not found")
    assert check.check(file) == Gone("file deleted")


def test_a_typescript_method_is_verified_like_a_python_function(repo: GitRepo) -> None:
    source = "export class Client {\n  flush(): void {\n    this.buffer = [];\n  }\n}\n"
    repo.write("src/client.ts", source)
    commit = repo.commit()
    record = verified(repo, "src/client.ts", "Client.flush", commit)
    repo.write("src/client.ts", "// a comment\n" + source)
    repo.commit()
    assert isinstance(checker(repo).check(record), Unchanged)
    repo.write("src/client.ts", source.replace("[]", "null"))
    repo.commit()
    outcome = checker(repo).check(record)
    assert isinstance(outcome, Changed) and "+    this.buffer = null;" in outcome.diff


def test_an_unknown_commit_reads_the_file(repo: GitRepo) -> None:
    repo.write("net/client.py", CLIENT)
    repo.commit()
    record = replace(verified(repo, "net/client.py", "retry", "0" * 40))
    assert isinstance(checker(repo).check(record), Unchanged)
