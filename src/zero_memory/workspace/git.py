"""A git working tree, read through the git command line: its root, its identity, its files at a commit, and
what changed since one (with git's own rename detection). Nothing here writes to the repository."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from zero_memory.domain.remotes import normalize_remote

GIT_TIMEOUT = 30.0
WORKING_TREE = "working-tree"
"""The name verification gives the code as it is on disk, beside commits' hashes."""


class GitError(RuntimeError):
    """git could not answer (not a repository, an unknown commit, git missing)."""


@dataclass(frozen=True, slots=True)
class Changes:
    """Paths that differ between a commit and the code compared with it."""

    modified: frozenset[str] = frozenset()
    deleted: frozenset[str] = frozenset()
    added: frozenset[str] = frozenset()
    renamed: dict[str, str] = field(default_factory=dict)  # old path -> new path

    def touches(self, path: str) -> bool:
        return path in self.modified or path in self.deleted or path in self.renamed


class Repository:
    def __init__(self, root: Path) -> None:
        self.root = root

    @classmethod
    def at(cls, directory: Path) -> Repository | None:
        """The repository holding ``directory``, or None outside any."""
        try:
            top = _git(directory, "rev-parse", "--show-toplevel").strip()
        except GitError:
            return None
        return cls(Path(top))

    def git(self, *args: str) -> str:
        return _git(self.root, *args)

    def head(self) -> str | None:
        try:
            return self.git("rev-parse", "--verify", "--quiet", "HEAD").strip() or None
        except GitError:
            return None

    def resolve(self, revision: str) -> str:
        return self.git("rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}").strip()

    def identity(self) -> str:
        """The repository as every clone of it names it: its origin remote, normalised; without a remote, its
        first commit (a repository with neither is its root directory)."""
        try:
            remote = self.git("config", "--get", "remote.origin.url").strip()
        except GitError:
            remote = ""
        if remote:
            return normalize_remote(remote)
        try:
            roots = self.git("rev-list", "--max-parents=0", "HEAD").split()
        except GitError:
            roots = []
        return f"root:{sorted(roots)[0]}" if roots else f"dir:{self.root}"

    def tracked(self, pathspecs: Sequence[str]) -> frozenset[str]:
        """The tracked files these pathspecs (paths, globs) name; never the whole tree's listing."""
        if not pathspecs:
            return frozenset()
        return frozenset(self.git("ls-files", "-z", "--", *pathspecs).split("\0")) - {""}

    def read(self, path: str, commit: str | None = None) -> str | None:
        """The file's text at ``commit``, or on disk with None; None when it does not exist there."""
        if commit is None or commit == WORKING_TREE:
            file = self.root / path
            try:
                return file.read_text(errors="replace") if file.is_file() else None
            except OSError:
                return None
        try:
            return self.git("show", f"{commit}:{path}")
        except GitError:
            return None

    def changes(self, since: str, until: str | None = None) -> Changes:
        """What differs between ``since`` and ``until`` (a commit), or the working tree with None: git's
        name-status with rename detection, plus files not yet tracked as additions."""
        args = ["diff", "--name-status", "-z", "-M", since] + ([until] if until and until != WORKING_TREE else [])
        fields = self.git(*args).split("\0")
        modified: set[str] = set()
        deleted: set[str] = set()
        added: set[str] = set()
        renamed: dict[str, str] = {}
        index = 0
        while index < len(fields) and fields[index]:
            status = fields[index]
            if status[0] in "RC":
                old, new = fields[index + 1], fields[index + 2]
                if status[0] == "R":
                    renamed[old] = new
                else:
                    added.add(new)
                index += 3
                continue
            path = fields[index + 1]
            {"D": deleted, "A": added}.get(status[0], modified).add(path)
            index += 2
        if until is None or until == WORKING_TREE:
            added |= set(self.git("ls-files", "-z", "--others", "--exclude-standard").split("\0")) - {""}
        return Changes(frozenset(modified), frozenset(deleted), frozenset(added), renamed)

    def dirty(self) -> bool:
        return bool(self.git("status", "--porcelain", "--untracked-files=no").strip())


def _git(directory: Path, *args: str) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(directory), *args],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise GitError(str(error)) from error
    if done.returncode != 0:
        raise GitError(done.stderr.strip() or f"git {args[0]} failed")
    return done.stdout
