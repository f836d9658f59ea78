"""Copying a whole installation from one store to another (``zm db copy``).

Every table in ``sql.COPY_TABLES`` moves row for row, every value kept (ids,
``seq`` numbers, timestamps and JSON text as stored), so SQLite → PostgreSQL →
SQLite gives back the same rows. What each store derives for itself is rebuilt
by it: SQLite's triggers give each memory a fresh ``rev`` and its full-text
entry, PostgreSQL generates ``content_tsv`` and ``copy`` moves its ``seq``
counters past the copied values.

The source is read in one snapshot and the destination written in one
transaction: a copy that fails leaves the destination as empty as it was. The
destination must start empty. A destination that builds its vector index
more cheaply once than row by row (PostgreSQL's HNSW) builds it after the
copy (``Store.bulk_load``). Afterwards the row counts of both sides are
compared table by table, and a random sample of vectors by cosine similarity.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from zero_memory import errors
from zero_memory.store import system_tx
from zero_memory.store.base import Store, Tx
from zero_memory.store.sql import COPY_TABLES

BATCH_ROWS = 500
SAMPLE_VECTORS = 100
# float32 vectors copied bit for bit give exactly 1; anything under this is a lost or damaged vector.
MIN_COSINE = 0.9999


@dataclass
class CopyReport:
    """Rows per table on each side, and the vector sample's result."""

    source_backend: str
    destination_backend: str
    source: dict[str, int] = field(default_factory=dict)
    destination: dict[str, int] = field(default_factory=dict)
    vectors_checked: int = 0
    min_cosine: float | None = None

    @property
    def mismatched(self) -> list[str]:
        return [t for t in COPY_TABLES if self.source.get(t, 0) != self.destination.get(t, 0)]

    @property
    def ok(self) -> bool:
        return not self.mismatched and (self.min_cosine is None or self.min_cosine >= MIN_COSINE)

    @property
    def rows(self) -> int:
        return sum(self.source.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "source_backend": self.source_backend,
            "destination_backend": self.destination_backend,
            "rows": self.rows,
            "tables": {
                t: {"source": self.source.get(t, 0), "destination": self.destination.get(t, 0)} for t in COPY_TABLES
            },
            "mismatched": self.mismatched,
            "vectors_checked": self.vectors_checked,
            "min_cosine": self.min_cosine,
        }


def row_counts(store: Store) -> dict[str, int]:
    """Rows of every copied table, from one snapshot."""
    with system_tx(store, "copy") as tx:
        return _counts(tx)


def _counts(tx: Tx) -> dict[str, int]:
    return {table: tx.count_rows(table) for table in COPY_TABLES}


def copy_store(
    source: Store,
    destination: Store,
    *,
    batch: int = BATCH_ROWS,
    sample: int = SAMPLE_VECTORS,
    advance: Callable[[int], None] = lambda n: None,
    seed: int | None = None,
) -> CopyReport:
    """Copy every row of ``source`` into the empty ``destination``, then verify; ``advance(n)`` per batch."""
    report = CopyReport(source.backend, destination.backend)
    picker = _Reservoir(sample, random.Random(seed))
    with system_tx(source, "copy") as src:
        memories = src.count_rows("memories")
    with (
        destination.bulk_load(memories),
        system_tx(source, "copy") as src,
        system_tx(destination, "copy", write=True) as dst,
    ):
        present = {t: n for t, n in _counts(dst).items() if n}
        if present:
            listed = ", ".join(f"{t}: {n}" for t, n in present.items())
            raise errors.conflict(
                f"the destination database is not empty ({listed} rows); copy into a new, empty database"
            )
        report.source = _counts(src)
        for name, table in COPY_TABLES.items():
            after: tuple[Any, ...] | None = None
            while rows := src.copy_rows(name, after, batch):
                dst.insert_rows(name, rows)
                if name == "memories":
                    picker.offer(r["id"] for r in rows if r["embedding"] is not None)
                after = tuple(rows[-1][k] for k in table.key)
                advance(len(rows))
        dst.restart_sequences()
    report.destination = row_counts(destination)
    report.vectors_checked, report.min_cosine = compare_vectors(source, destination, picker.chosen)
    return report


def compare_vectors(source: Store, destination: Store, ids: list[str]) -> tuple[int, float | None]:
    """(how many, the lowest cosine similarity) of the sampled memories' vectors on both sides."""
    if not ids:
        return 0, None
    lowest = 1.0
    with system_tx(source, "copy") as src, system_tx(destination, "copy") as dst:
        for memory_id in ids:
            a, b = src.memory_vector(memory_id), dst.memory_vector(memory_id)
            lowest = min(lowest, _cosine(a, b))
    return len(ids), lowest


def _cosine(a: np.ndarray | None, b: np.ndarray | None) -> float:
    if a is None or b is None or a.shape != b.shape:
        return 0.0
    norms = float(np.linalg.norm(a) * np.linalg.norm(b))
    if norms == 0.0:
        return 1.0 if not a.any() and not b.any() else 0.0
    return float(np.dot(a, b) / norms)


class _Reservoir:
    """A uniform random sample of a stream of unknown length (Algorithm R)."""

    def __init__(self, size: int, rng: random.Random) -> None:
        self.size = size
        self.rng = rng
        self.seen = 0
        self.chosen: list[str] = []

    def offer(self, items: Iterable[str]) -> None:
        for item in items:
            self.seen += 1
            if len(self.chosen) < self.size:
                self.chosen.append(item)
            else:
                slot = self.rng.randrange(self.seen)
                if slot < self.size:
                    self.chosen[slot] = item
