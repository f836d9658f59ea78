"""Anchors: where in a repository the code a memory describes lives, and what verifying it found.

An anchor is a path relative to the repository's root and, optionally, a symbol in that file (a function, a
class, a method as ``Class.method``, a top-level constant). The server keeps, beside it, the repository's
identity, the commit it was last verified at and a hash of the anchored region (the symbol's source, or the
whole file). Verification compares that region with the code now; the outcome is one of four small types,
and what the server does with each is decided in one pure function here.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

MAX_ANCHORS = 10
"""Anchors one memory may carry: a memory is about one thing, a few places at most."""

MAX_PATH_LENGTH = 500
MAX_SYMBOL_LENGTH = 200
DIFF_LIMIT = 4_000
"""Characters of a region's diff kept as a row's evidence: enough to read the change, never a whole file."""


class Origin(StrEnum):
    EXPLICIT = "explicit"  # named by the writer
    AUTOMATIC = "automatic"  # found in the content by the server


class AnchorState(StrEnum):
    VERIFIED = "verified"  # the region matched at verified_commit
    UNVERIFIED = "unverified"  # named, never checked against a working tree
    CHANGED = "changed"  # the region differs from the one last verified
    GONE = "gone"  # the file or the symbol no longer exists


@dataclass(frozen=True, slots=True)
class Anchor:
    """What a writer names: a path from the repository's root and, optionally, a symbol in it."""

    path: str
    symbol: str | None = None

    @property
    def label(self) -> str:
        return f"{self.path}::{self.symbol}" if self.symbol else self.path


@dataclass(frozen=True, slots=True)
class AnchorRecord:
    """An anchor as the server keeps it."""

    memory_id: str
    path: str
    symbol: str | None
    origin: Origin
    state: AnchorState
    repository: str | None  # the repository's identity (its normalised remote, else its first commit)
    commit: str | None  # the commit the region was last verified at
    content_hash: str | None  # of the region at that commit
    verified_at: datetime | None
    drift: str | None = None  # "FROM..TO": the commits between which the region changed, while CHANGED or GONE
    # While CHANGED: the code verification found instead (where, and its hash); upholding the memory re-anchors
    # it there.
    observed: Anchor | None = None
    observed_hash: str | None = None

    @property
    def anchor(self) -> Anchor:
        return Anchor(self.path, self.symbol)


def region_hash(text: str) -> str:
    """The hash of a region's source, blind to line endings and trailing blanks (an editor's save is no
    change), never to a changed character."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return "sha256:" + hashlib.sha256("\n".join(lines).encode()).hexdigest()


# What verifying one anchor against the code found.


@dataclass(frozen=True, slots=True)
class Unchanged:
    content_hash: str


@dataclass(frozen=True, slots=True)
class Moved:
    """The region is the same, somewhere else: a renamed or moved file, or the symbol found in another file."""

    path: str
    symbol: str | None
    content_hash: str


@dataclass(frozen=True, slots=True)
class Changed:
    """The region's code differs from the one last verified (followed to its new place if it also moved)."""

    path: str
    symbol: str | None
    content_hash: str
    diff: str


@dataclass(frozen=True, slots=True)
class Gone:
    reason: str  # "file deleted", "symbol not found"


Outcome = Unchanged | Moved | Changed | Gone


class Action(StrEnum):
    STAMP = "stamp"  # record the commit: verified, nothing else
    REANCHOR = "reanchor"  # follow the code to its new place, audited and reversible
    RAISE = "raise"  # an `outdated` row with the evidence (or the open one brought up to date)
    NOTHING = "nothing"


@dataclass(frozen=True, slots=True)
class Step:
    action: Action
    reason: str


def step_for(record: AnchorRecord, outcome: Outcome) -> Step:
    """What the server does with one verification: pure, so the table of cases is tested alone.

    An anchor never verified is stamped whatever the code says now (there is nothing to compare with); a
    change already reported (its row open, the anchor CHANGED) is raised again only to bring the row's
    evidence up to date -- the row stays one row while the code keeps changing."""
    if record.content_hash is None:
        if isinstance(outcome, Gone):
            return Step(Action.RAISE, outcome.reason)
        return Step(Action.STAMP, "first verification")
    match outcome:
        case Unchanged():
            if record.state in (AnchorState.CHANGED, AnchorState.GONE):
                return Step(Action.NOTHING, "still under review")
            return Step(Action.STAMP, "unchanged")
        case Moved():
            return Step(Action.REANCHOR, "moved")
        case Changed():
            return Step(Action.RAISE, "changed")
        case Gone():
            return Step(Action.RAISE, outcome.reason)
