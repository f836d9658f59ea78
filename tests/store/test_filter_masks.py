"""Masks by filter: caught up on the rows changed since their last use, only when asked for."""

from __future__ import annotations

import numpy as np

from zero_memory.store.sqlite.filter_masks import MAX_NOTED, FilterMasks


class Rows:
    """Each row's owner; a filter is the owner it keeps. Records what was matched."""

    def __init__(self, owners: list[int]) -> None:
        self.owners = np.array(owners)
        self.matched: list[tuple[int, int]] = []  # (filter, rows matched)

    def matches(self, owner: int, seqs: np.ndarray | slice) -> np.ndarray:
        picked = self.owners[seqs]
        self.matched.append((owner, len(picked)))
        return np.asarray(picked == owner)

    def change(self, masks: FilterMasks[int], seqs: list[int], owner: int) -> None:
        self.owners[seqs] = owner
        masks.changed(np.array(seqs))


def test_a_mask_is_made_whole_then_kept() -> None:
    rows = Rows([1, 2, 1, 3])
    masks = FilterMasks(rows.matches)
    assert masks.get(1).tolist() == [True, False, True, False]
    assert masks.get(1).tolist() == [True, False, True, False]
    assert rows.matched == [(1, 4)]


def test_a_change_is_matched_only_by_the_masks_asked_for_after_it() -> None:
    rows = Rows([1, 2, 1, 3, 2, 2])
    masks = FilterMasks(rows.matches)
    masks.get(1), masks.get(2)
    rows.matched.clear()
    rows.change(masks, [0, 3], 2)
    rows.change(masks, [4], 1)
    assert rows.matched == []
    assert masks.get(2).tolist() == [True, True, False, True, False, True]
    assert rows.matched == [(2, 3)]  # the rows changed since, in one step
    assert masks.get(2).tolist() == [True, True, False, True, False, True]
    assert masks.get(1).tolist() == [False, False, True, False, True, False]
    assert rows.matched == [(2, 3), (1, 3)]


def test_masks_agree_with_masks_made_whole_through_many_changes() -> None:
    rng = np.random.default_rng(7)
    rows = Rows(rng.integers(1, 5, 50).tolist())
    masks = FilterMasks(rows.matches)
    masks.get(1), masks.get(2), masks.get(3)
    for step in range(3 * MAX_NOTED + 5):
        rows.change(
            masks, rng.choice(50, size=int(rng.integers(1, 6)), replace=False).tolist(), int(rng.integers(1, 5))
        )
        asked = step % 4 + 1
        assert masks.get(asked).tolist() == (rows.owners == asked).tolist()
    for owner in (1, 2, 3, 4):
        assert masks.get(owner).tolist() == (rows.owners == owner).tolist()


def test_cleared_masks_are_made_whole_again() -> None:
    rows = Rows([1, 2])
    masks = FilterMasks(rows.matches)
    masks.get(1)
    masks.clear()
    assert len(masks) == 0 and 1 not in masks
    rows.change(masks, [1], 1)
    assert masks.get(1).tolist() == [True, True]
    assert rows.matched == [(1, 2), (1, 2)]
