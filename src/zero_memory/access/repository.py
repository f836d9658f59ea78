"""The git repository a directory is in, read from its ``.git`` (no git process).

A project's identity is its repository: the main working tree's root (a
worktree or a subdirectory is the same repository) and the origin remote (a
clone elsewhere of the same remote is the same project, a fork is another).
"""

from __future__ import annotations

import configparser
import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Repository:
    """``root``: the main working tree's directory; ``remote``: its origin URL as configured, if any."""

    root: str
    remote: str | None


def normalize_path(path: str) -> str:
    return str(Path(os.path.expanduser(path)).absolute()).rstrip(os.sep) or os.sep


def find_repository(path: str) -> Repository | None:
    """The repository enclosing ``path`` on this machine, or None (no such directory, or in no repository)."""
    start = Path(normalize_path(path))
    for directory in (start, *start.parents):
        dot_git = directory / ".git"
        if dot_git.is_dir():
            return Repository(str(directory), git_remote(dot_git / "config"))
        if dot_git.is_file():
            common = _common_dir(dot_git)
            if common is None:
                return Repository(str(directory), None)
            # A worktree's common directory is the main tree's .git; a submodule's is its own module directory.
            root = common.parent if common.name == ".git" else directory
            return Repository(str(root), git_remote(common / "config"))
    return None


def git_remote(config_path: Path) -> str | None:
    """The origin remote (else the first one) named in a git config file."""
    if not config_path.is_file():
        return None
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    try:
        parser.read(config_path, encoding="utf-8")
    except (configparser.Error, OSError, UnicodeDecodeError):
        return None
    for section in ('remote "origin"', *[s for s in parser.sections() if s.startswith("remote ")]):
        if parser.has_option(section, "url"):
            return parser.get(section, "url")
    return None


def _common_dir(dot_git: Path) -> Path | None:
    """The git directory a ``.git`` file points to, followed to its ``commondir`` when it has one."""
    try:
        text = dot_git.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith("gitdir:"):
        return None
    gitdir = Path(text.removeprefix("gitdir:").strip())
    gitdir = (dot_git.parent / gitdir).resolve() if not gitdir.is_absolute() else gitdir
    try:
        common = (gitdir / "commondir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return gitdir
    return (gitdir / common).resolve() if not Path(common).is_absolute() else Path(common)
