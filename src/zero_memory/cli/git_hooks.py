"""``zm setup git``: git hooks that verify the repository's anchored memories after the code moves.

After a commit, a merge or pull, a checkout or a rebase, ``zm verify --hook`` runs in the background: git
never waits for it, it is bounded in time, and it says what it did in ``zm capture log``. Each hook is a block
between two marker lines, so a hook the user already has keeps its own lines, and running setup again
updates our block in place (or changes nothing).
"""

from __future__ import annotations

import os
import shlex
import stat
from dataclasses import dataclass
from pathlib import Path

from zero_memory import errors
from zero_memory.workspace.git import GitError, Repository

HOOKS = ("post-commit", "post-merge", "post-checkout", "post-rewrite")
BEGIN = "# >>> zero-memory: verify anchored memories (zm setup git) >>>"
END = "# <<< zero-memory <<<"
PASSED = ("ZM_HOME", "ZM_USER", "ZM_SERVER_URL")
"""What the hook keeps of the environment setup ran in; never a token or a database URL (a file in .git)."""


@dataclass(frozen=True, slots=True)
class Installed:
    hook: str
    change: str  # added, updated, unchanged
    path: Path


def block(zm: str, env: dict[str, str]) -> str:
    exports = "".join(f"{name}={shlex.quote(value)} " for name, value in sorted(env.items()))
    command = f"{exports}{shlex.quote(zm)} verify --hook >/dev/null 2>&1 </dev/null &"
    return f"{BEGIN}\n{command}\n{END}\n"


def merged(existing: str | None, ours: str) -> str:
    """The hook file with our block added, or put in place of the one there."""
    if not existing:
        return "#!/bin/sh\n" + ours
    if BEGIN in existing and END in existing:
        start = existing.index(BEGIN)
        end = existing.index(END, start) + len(END)
        rest = existing[end:].removeprefix("\n")
        return existing[:start] + ours + rest
    return existing + ("" if existing.endswith("\n") else "\n") + ours


def install(directory: Path, zm: str) -> list[Installed]:
    repository = Repository.at(directory)
    if repository is None:
        raise errors.validation(f"{directory} is not inside a git repository: run zm setup git in one")
    try:
        hooks = Path(repository.git("rev-parse", "--git-path", "hooks").strip())
    except GitError as error:
        raise errors.validation(f"git: {error}") from error
    hooks = hooks if hooks.is_absolute() else repository.root / hooks
    hooks.mkdir(parents=True, exist_ok=True)
    ours = block(zm, {name: os.environ[name] for name in PASSED if os.environ.get(name)})
    done = []
    for name in HOOKS:
        path = hooks / name
        existing = path.read_text() if path.exists() else None
        text = merged(existing, ours)
        change = (
            "unchanged" if text == existing else ("added" if existing is None or BEGIN not in existing else "updated")
        )
        if change != "unchanged":
            path.write_text(text)
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        done.append(Installed(name, change, path))
    return done
