"""What the server does with each verification outcome: the table of cases."""

from __future__ import annotations

import pytest

from zero_memory.domain.anchors import (
    Action,
    AnchorRecord,
    AnchorState,
    Changed,
    Gone,
    Moved,
    Origin,
    Outcome,
    Unchanged,
    region_hash,
    step_for,
)


def record(state: AnchorState, content_hash: str | None = "sha256:a") -> AnchorRecord:
    return AnchorRecord("mem_1", "a.py", "f", Origin.EXPLICIT, state, None, "c1", content_hash, None)


CHANGED = Changed("a.py", "f", "sha256:b", "-x\n+y")


@pytest.mark.parametrize(
    ("state", "content_hash", "outcome", "action"),
    [
        (AnchorState.VERIFIED, "sha256:a", Unchanged("sha256:a"), Action.STAMP),
        (AnchorState.VERIFIED, "sha256:a", Moved("b.py", "f", "sha256:a"), Action.REANCHOR),
        (AnchorState.VERIFIED, "sha256:a", CHANGED, Action.RAISE),
        (AnchorState.VERIFIED, "sha256:a", Gone("file deleted"), Action.RAISE),
        (AnchorState.CHANGED, "sha256:a", CHANGED, Action.RAISE),  # the open row's evidence brought up to date
        (AnchorState.CHANGED, "sha256:a", Unchanged("sha256:a"), Action.NOTHING),  # a person decides
        (AnchorState.GONE, "sha256:a", Unchanged("sha256:a"), Action.NOTHING),
        (AnchorState.UNVERIFIED, None, Unchanged("sha256:b"), Action.STAMP),  # nothing to compare with yet
        (AnchorState.UNVERIFIED, None, Moved("b.py", "f", "sha256:b"), Action.STAMP),
        (AnchorState.UNVERIFIED, None, Gone("symbol not found"), Action.RAISE),
    ],
)
def test_step_for_each_outcome(state: AnchorState, content_hash: str | None, outcome: Outcome, action: Action) -> None:
    assert step_for(record(state, content_hash), outcome).action == action


def test_the_region_hash_ignores_line_endings_and_trailing_blanks_only() -> None:
    assert region_hash("def f():\n    pass\n") == region_hash("def f():  \r\n    pass\r\n\r\n")
    assert region_hash("def f():\n    pass\n") != region_hash("def f():\n    return\n")
    assert region_hash("a\n b") != region_hash("a\nb")
