"""An in-process vector index over the SQLite store's embeddings.

numpy brute force: one matrix product over every row, masked by scope, owner
and liveness. It follows the database through the ``rev`` counter that every
memory change takes, so writes from other processes appear at the next search.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass

import numpy as np

Row = tuple[str, str, str, bool, bytes | None, int]  # id, owner, scope, live, embedding, rev


@dataclass
class _Codes:
    """Small integer codes for repeated strings (owners, scopes)."""

    index: dict[str, int]

    def code(self, value: str) -> int:
        found = self.index.get(value)
        if found is None:
            found = self.index[value] = len(self.index)
        return found

    def codes(self, values: Iterable[str]) -> np.ndarray:
        return np.array([self.index[v] for v in values if v in self.index], dtype=np.int32)


class VectorIndex:
    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.lock = threading.RLock()
        self.watermark = 0
        self._ids: list[str] = []
        self._pos: dict[str, int] = {}
        self._matrix = np.zeros((0, dim), dtype=np.float32)
        self._owner = np.zeros(0, dtype=np.int32)
        self._scope = np.zeros(0, dtype=np.int32)
        self._live = np.zeros(0, dtype=bool)
        self._owners = _Codes({})
        self._scopes = _Codes({})
        self._version = 0
        self._masks: dict[tuple[frozenset[str] | None, str | None], tuple[int, np.ndarray]] = {}

    def __len__(self) -> int:
        return len(self._ids)

    def _mask(self, n: int, scopes: Collection[str] | None, owner: str | None) -> np.ndarray | None:
        """Live rows in the scopes and of the owner asked for; cached until the index changes."""
        key = (frozenset(scopes) if scopes is not None else None, owner)
        cached = self._masks.get(key)
        if cached is not None and cached[0] == self._version and len(cached[1]) == n:
            return cached[1]
        mask = self._live[:n].copy()
        if scopes is not None:
            mask &= np.isin(self._scope[:n], self._scopes.codes(scopes))
        if owner is not None:
            code = self._owners.index.get(owner)
            if code is None:
                return None
            mask &= self._owner[:n] == code
        if len(self._masks) >= 64:
            self._masks.clear()
        self._masks[key] = (self._version, mask)
        return mask

    def reset(self) -> None:
        with self.lock:
            self.__init__(self.dim)  # type: ignore[misc]

    def refresh(self, fetch: Callable[[int], list[Row]]) -> None:
        """Apply every row changed since the watermark."""
        with self.lock:
            rows = fetch(self.watermark)
            for memory_id, owner, scope, live, blob, rev in rows:
                self._apply(memory_id, owner, scope, live, blob)
                self.watermark = max(self.watermark, rev)
            if rows:
                self._version += 1

    def _apply(self, memory_id: str, owner: str, scope: str, live: bool, blob: bytes | None) -> None:
        vector = np.frombuffer(blob, dtype=np.float32) if blob is not None else None
        usable = vector is not None and vector.shape[0] == self.dim
        pos = self._pos.get(memory_id)
        if pos is None:
            if not usable:
                return
            pos = len(self._ids)
            self._grow(pos + 1)
            self._ids.append(memory_id)
            self._pos[memory_id] = pos
        if usable:
            self._matrix[pos] = vector
        self._owner[pos] = self._owners.code(owner)
        self._scope[pos] = self._scopes.code(scope)
        self._live[pos] = live and usable

    def _grow(self, needed: int) -> None:
        capacity = self._matrix.shape[0]
        if needed <= capacity:
            return
        new_capacity = max(needed, capacity * 2, 1024)
        matrix = np.zeros((new_capacity, self.dim), dtype=np.float32)
        matrix[:capacity] = self._matrix
        self._matrix = matrix
        for name in ("_owner", "_scope", "_live"):
            old = getattr(self, name)
            grown = np.zeros(new_capacity, dtype=old.dtype)
            grown[:capacity] = old
            setattr(self, name, grown)

    def search_many(
        self,
        vectors: np.ndarray,
        *,
        floor: float,
        limit: int,
        owner: str | None,
        excludes: list[Collection[str]],
    ) -> list[list[tuple[str, float]]]:
        """Neighbours of many vectors with one matrix product (the sweep's subjects, batched)."""
        with self.lock:
            n = len(self._ids)
            if n == 0 or limit <= 0 or len(vectors) == 0:
                return [[] for _ in range(len(vectors))]
            base = self._mask(n, None, owner)
            if base is None:
                return [[] for _ in range(len(vectors))]
            # One matrix product for the whole batch, one contiguous row of scores per vector.
            sims = np.asarray(vectors, dtype=np.float32) @ self._matrix[:n].T
            sims += np.where(base, np.float32(0), np.float32(-np.inf))
            results = []
            for row, exclude in zip(sims, excludes, strict=True):
                for memory_id in exclude:
                    pos = self._pos.get(memory_id)
                    if pos is not None:
                        row[pos] = -np.inf
                above = np.flatnonzero(row >= floor)
                if len(above) > limit:
                    above = above[np.argpartition(-row[above], limit - 1)[:limit]]
                above = above[np.argsort(-row[above], kind="stable")]
                results.append([(self._ids[i], float(row[i])) for i in above])
            return results

    def search(
        self,
        vector: np.ndarray,
        *,
        floor: float,
        limit: int,
        scopes: Collection[str] | None,
        owner: str | None,
        exclude: Collection[str],
    ) -> list[tuple[str, float]]:
        with self.lock:
            n = len(self._ids)
            if n == 0 or limit <= 0:
                return []
            base = self._mask(n, scopes, owner)
            if base is None:
                return []
            mask = base
            positions = [self._pos[m] for m in exclude if m in self._pos]
            if positions:
                mask = base.copy()
                mask[positions] = False
            sims = self._matrix[:n] @ vector.astype(np.float32, copy=False)
            sims = np.where(mask, sims, -np.inf)
            k = min(limit, n)
            top = np.argpartition(-sims, k - 1)[:k] if k < n else np.arange(n)
            top = top[np.argsort(-sims[top], kind="stable")]
            return [(self._ids[i], float(sims[i])) for i in top if sims[i] >= floor][:limit]
