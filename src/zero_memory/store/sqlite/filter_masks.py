"""The rows each search filter keeps, by seq: one mask a filter, brought up to date when next asked for.

A row's place in a mask depends only on that row's current state, so a mask
is current once every row changed since it was made or last caught up is
matched again. The index used to match the changed rows against every cached
mask at each change; under eight clients on two workers a search found rows
other calls had written nearly every time, and that matching against eight
filters on average (most of them another call's) was 0.08 ms of a call's CPU.
Now a change is only noted, and a mask catches up on the rows noted since its
last use when a search asks for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

import numpy as np

F = TypeVar("F")

Matches = Callable[[F, np.ndarray | slice], np.ndarray]

# Changes noted before every mask catches up and the notes go: what waits is bounded for a filter asked
# for rarely, and a mask still catches up in one step for many changes.
MAX_NOTED = 64


class FilterMasks(Generic[F]):
    """Masks by filter; ``matches(filter, seqs)`` is whether those rows pass the filter now (``slice(None)``:
    every row)."""

    def __init__(self, matches: Matches[F]) -> None:
        self._matches = matches
        self._masks: dict[F, tuple[np.ndarray, int]] = {}  # each mask, and the changes it has seen
        self._noted: list[np.ndarray] = []

    def __len__(self) -> int:
        return len(self._masks)

    def __contains__(self, flt: object) -> bool:
        return flt in self._masks

    def clear(self) -> None:
        """Forget every mask (the rows were renumbered or their states replaced)."""
        self._masks.clear()
        self._noted.clear()

    def changed(self, seqs: np.ndarray) -> None:
        """These rows' states changed: every mask is to match them again before it is used."""
        if not self._masks or len(seqs) == 0:
            return
        self._noted.append(seqs)
        if len(self._noted) >= MAX_NOTED:
            for flt in list(self._masks):
                self.get(flt)
            # Every mask has seen every change noted: the count starts again.
            self._noted.clear()
            self._masks = {flt: (mask, 0) for flt, (mask, _) in self._masks.items()}

    def get(self, flt: F) -> np.ndarray:
        """The filter's mask as the rows are now, made whole the first time."""
        end = len(self._noted)
        found = self._masks.get(flt)
        if found is None:
            mask = self._matches(flt, slice(None))
        else:
            mask, seen = found
            if seen == end:
                return mask
            pending = self._noted[seen:]
            seqs = pending[0] if len(pending) == 1 else np.concatenate(pending)
            mask[seqs] = self._matches(flt, seqs)
        self._masks[flt] = (mask, end)
        return mask
