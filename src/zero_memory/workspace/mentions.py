"""Anchors found in a memory's words: the repository's files it names, and the symbols it names in them.

"``retry()`` in src/net/client.py backs off exponentially" anchors ``src/net/client.py::retry``. A path counts
when it is a file the repository tracks (a glob such as ``db/0042_*.sql`` when it matches exactly one); a
symbol (``name()``, ``Class.method`` or a name in backticks) when one of the named files defines it, or, when
the memory names no file, when exactly one tracked file that mentions the name defines it. Anything
ambiguous is left out: an automatic anchor must be right, the writer can always name one.
"""

from __future__ import annotations

import fnmatch
import re

from zero_memory.domain.anchors import MAX_ANCHORS, Anchor
from zero_memory.workspace import symbols
from zero_memory.workspace.git import GitError, Repository

MAX_FILES_SEARCHED = 20
"""Files parsed to place a symbol the memory names without its file; past that it is too common to anchor."""

_PATH = re.compile(r"(?<![\w/.-])((?:[\w.*-]+/)*[\w*-][\w.*-]*\.[A-Za-z0-9]{1,8})(?![\w/-])")
_CALL = re.compile(r"(?<![\w.])([A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)?)\(\)")
_TICKED = re.compile(r"`([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)(?:\(\))?`")


def path_words(content: str) -> list[str]:
    """The words of ``content`` that read as a file's path or a glob, as a repository's root would name them."""
    return list(dict.fromkeys(m.group(1).strip(".").removeprefix("./") for m in _PATH.finditer(content)))


def mentioned_paths(words: list[str], tracked: frozenset[str]) -> list[str]:
    """The tracked files the words name: a path as it is, a glob that matches exactly one."""
    found: list[str] = []
    for word in words:
        hits = [path for path in tracked if fnmatch.fnmatchcase(path, word)] if "*" in word else [word]
        path = hits[0] if len(hits) == 1 and hits[0] in tracked else None
        if path and path not in found:
            found.append(path)
    return found


def mentioned_symbols(content: str) -> list[str]:
    names: list[str] = []
    for pattern in (_CALL, _TICKED):
        for match in pattern.finditer(content):
            name = match.group(1)
            if name not in names:
                names.append(name)
    return names


def names_code(content: str) -> bool:
    """Whether ``content`` names a file or a symbol at all: without, there is nothing to look for."""
    return bool(path_words(content) or mentioned_symbols(content))


def anchors_in(content: str, repository: Repository) -> list[Anchor]:
    """The anchors ``content`` names that exist in the repository's working tree, at most ``MAX_ANCHORS``."""
    words, names = path_words(content), mentioned_symbols(content)
    if not words and not names:
        return []  # nothing named: no git process
    # Only what the words name is listed, the names literally: a name that is a tracked file is the file.
    try:
        tracked = repository.tracked([*words, *(f":(literal){name}" for name in names)])
    except GitError:
        return []
    paths = mentioned_paths(words, tracked)
    names = [name for name in names if name not in tracked]  # "Store.flush" reads as a file name too
    anchors: list[Anchor] = []
    for path in paths:
        source = repository.read(path) if symbols.supported(path) else None
        inside = [name for name in names if source is not None and symbols.find(path, source, name)]
        anchors += [Anchor(path, name) for name in inside]
        if not inside:
            anchors.append(Anchor(path))
    if not paths:
        for name in names:
            defined_in = _sole_definition(repository, name)
            if defined_in:
                anchors.append(Anchor(defined_in, name))
    return anchors[:MAX_ANCHORS]


def _sole_definition(repository: Repository, name: str) -> str | None:
    bare = name.rsplit(".", 1)[-1]
    try:
        listed = repository.git("grep", "-l", "-w", "-F", "-I", "-e", bare).split("\n")
    except GitError:  # git grep answers 1 when nothing matches
        return None
    files = [path for path in listed if path and symbols.supported(path)]
    if not files or len(files) > MAX_FILES_SEARCHED:
        return None
    defining = [path for path in files if (source := repository.read(path)) and symbols.find(path, source, name)]
    return defining[0] if len(defining) == 1 else None
