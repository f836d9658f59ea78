"""Verifying anchors against a working tree or a commit: for each, unchanged, moved, changed or gone.

Cheap by construction: git names the files that changed since each anchor's last verified commit (one
``git diff`` per distinct commit), and only those files are read and parsed. An anchor whose file git does not
name is unchanged without a read. A symbol missing from its file is looked for in the other files the same
change touched (a function moved to another module), never in the whole repository.
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from zero_memory.domain.anchors import (
    DIFF_LIMIT,
    AnchorRecord,
    Changed,
    Gone,
    Moved,
    Outcome,
    Unchanged,
    region_hash,
)
from zero_memory.workspace import symbols
from zero_memory.workspace.git import WORKING_TREE, Changes, GitError, Repository


@dataclass(frozen=True, slots=True)
class Located:
    path: str
    symbol: str | None
    text: str


class Checker:
    """Verifies anchors of one repository against ``target``: a commit, or the working tree."""

    def __init__(self, repository: Repository, target: str = WORKING_TREE) -> None:
        self.repository = repository
        self.target = target
        self._changes: dict[str, Changes | None] = {}
        self._files: dict[str, str | None] = {}
        self._regions: dict[str, dict[str, symbols.Region]] = {}
        self.files_read = 0
        self.left = 0  # anchors not checked before the deadline

    def check_all(
        self, records: Iterable[AnchorRecord], *, deadline: float | None = None
    ) -> Iterator[tuple[AnchorRecord, Outcome]]:
        """Each record with its outcome; past ``deadline`` (``time.monotonic()``) the rest are left for the next
        verification, which finds them as they were (each anchor's stamp is its own)."""
        for record in records:
            if deadline is not None and time.monotonic() > deadline:
                self.left += 1
                continue
            yield record, self.check(record)

    def check(self, record: AnchorRecord) -> Outcome:
        changes = self._changes_since(record.commit) if record.commit else None
        if record.commit and changes is not None and not changes.touches(record.path):
            return Unchanged(record.content_hash or "")
        path = changes.renamed.get(record.path, record.path) if changes is not None else record.path
        here = self._locate(path, record.symbol)
        if here is None and record.symbol and changes is not None:
            here = self._search(record.symbol, changes)
        if here is None:
            if self._read(path) is None:
                return Gone("file deleted")
            return Gone("symbol not found")
        content_hash = region_hash(here.text)
        moved = (here.path, here.symbol) != (record.path, record.symbol)
        if record.content_hash is None or content_hash == record.content_hash:
            return Moved(here.path, here.symbol, content_hash) if moved else Unchanged(content_hash)
        return Changed(here.path, here.symbol, content_hash, self._diff(record, here))

    # reading

    def _changes_since(self, commit: str) -> Changes | None:
        if commit not in self._changes:
            try:
                until = None if self.target == WORKING_TREE else self.target
                self._changes[commit] = self.repository.changes(commit, until)
            except GitError:
                self._changes[commit] = None  # an unknown commit (a clone without it): every file is read
        return self._changes[commit]

    def _read(self, path: str) -> str | None:
        if path not in self._files:
            self.files_read += 1
            self._files[path] = self.repository.read(path, self.target)
        return self._files[path]

    def _locate(self, path: str, symbol: str | None) -> Located | None:
        source = self._read(path)
        if source is None:
            return None
        if symbol is None:
            return Located(path, None, source)
        if path not in self._regions:
            self._regions[path] = symbols.regions(path, source)  # parsed once, however many anchors it holds
        region = symbols.pick(self._regions[path], symbol)
        return Located(path, symbol, region.text) if region else None

    def _search(self, symbol: str, changes: Changes) -> Located | None:
        """The symbol in another file this change touched, when exactly one defines it."""
        candidates = sorted({*changes.added, *changes.modified, *changes.renamed.values()})
        found = [here for path in candidates if symbols.supported(path) and (here := self._locate(path, symbol))]
        return found[0] if len(found) == 1 else None

    def _diff(self, record: AnchorRecord, here: Located) -> str:
        before = self.repository.read(record.path, record.commit) if record.commit else None
        if before is not None and record.symbol:
            region = symbols.find(record.path, before, record.symbol)
            before = region.text if region else None
        old_name = record.path if not record.symbol else f"{record.path}::{record.symbol}"
        new_name = here.path if not here.symbol else f"{here.path}::{here.symbol}"
        lines = difflib.unified_diff(
            (before or "").splitlines(),
            here.text.splitlines(),
            fromfile=f"{old_name} @ {(record.commit or '?')[:12]}",
            tofile=f"{new_name} @ {self.target[:12]}",
            lineterm="",
            n=2,
        )
        text = "\n".join(lines)
        return text if len(text) <= DIFF_LIMIT else text[: DIFF_LIMIT - 20] + "\n… (diff cut)"
