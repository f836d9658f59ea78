"""Memories imported from an agent's per-project folders, through the real ``zm`` binary.

Claude Code keeps a folder per repository under ``~/.claude/projects``, named
after the repository's path (``/home/u/repos/shop`` → ``-home-u-repos-shop``).
Imported from there, a memory belongs to the registered project whose path the
folder encodes, so a scan judges it against that project's memories instead
of skipping the pair as cross-project; a folder naming no registered project
is unresolved and judged as well.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.harness import Result, Zm
from tests.fakes.openai_server import FakeOpenAIServer, RecordedRequest, Reply

IN_PROJECT = "The staging database of the shop is green"
FROM_ITS_FOLDER = "The staging database of the shop is blue"
FROM_AN_UNKNOWN_FOLDER = "The staging database of the shop is red"


def judge(request: RecordedRequest) -> Reply:
    if FakeOpenAIServer.schema_name(request) == "portability_verdict":
        return FakeOpenAIServer.portability(False, 0.9, "Project-specific.")
    return FakeOpenAIServer.verdict("contradiction", 0.92, "Both cannot be the staging colour.")


@pytest.fixture
def judged(zm_binary: Zm) -> Iterator[tuple[Zm, FakeOpenAIServer]]:
    with FakeOpenAIServer() as fake:
        fake.respond_with(judge)
        env = {
            "ZM_JUDGE_PROVIDER": "openai",
            "ZM_JUDGE_BASE_URL": fake.base_url,
            "ZM_JUDGE_API_KEY": "test-key",
            "ZM_HYGIENE_MODEL": "judge-strong",
            "ZM_JUDGE_TIMEOUT_S": "10",
        }
        yield Zm({**zm_binary.env, **env}, binary=True), fake


def ok(result: Result) -> Result:
    assert result.exit_code == 0, result.stderr
    return result


def agent_folder(root: Path, repository: Path, text: str) -> None:
    """What Claude Code keeps for ``repository``: ``projects/<path with every non-alphanumeric as ->/memory``."""
    folder = root / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(repository)) / "memory"
    folder.mkdir(parents=True)
    (folder / "staging.md").write_text(f"---\nkind: fact\n---\n{text}\n")


def test_an_imported_project_folder_is_judged_with_its_project(
    judged: tuple[Zm, FakeOpenAIServer], tmp_path: Path
) -> None:
    zm, fake = judged
    shop = tmp_path / "repos" / "shop"
    shop.mkdir(parents=True)
    ok(zm("project", "create", "shop", "--path", str(shop)))
    ok(zm("remember", IN_PROJECT, "--kind", "fact", "--project", "shop"))
    agent_folder(tmp_path, shop, FROM_ITS_FOLDER)
    agent_folder(tmp_path, tmp_path / "repos" / "never-registered", FROM_AN_UNKNOWN_FOLDER)

    imported = ok(zm("import", str(tmp_path / ".claude" / "projects"), "--scope", "personal", "--json")).json()
    assert imported["imported"] == 2 and imported["failed"] == []
    scan = ok(zm("hygiene", "scan", "--json")).json()
    assert scan["skipped_cross_project"] == 0

    judged_pairs = {
        frozenset(text for text in (IN_PROJECT, FROM_ITS_FOLDER, FROM_AN_UNKNOWN_FOLDER) if text in prompt)
        for prompt in (
            FakeOpenAIServer.user_message(r)
            for r in fake.requests
            if FakeOpenAIServer.schema_name(r) == "hygiene_verdict"
        )
    }
    assert frozenset({IN_PROJECT, FROM_ITS_FOLDER}) in judged_pairs
    assert frozenset({IN_PROJECT, FROM_AN_UNKNOWN_FOLDER}) in judged_pairs
    queued = ok(zm("conflicts", "list", "--json")).json()["conflicts"]
    contents = [{row["memory_a"]["content"], row["memory_b"]["content"]} for row in queued]
    assert {IN_PROJECT, FROM_ITS_FOLDER} in contents
