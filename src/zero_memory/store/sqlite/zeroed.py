"""Large zeroed arrays whose memory is taken a small page at a time, as rows are written.

numpy advises the kernel to back any large array with 2 MB pages. Where the
kernel compacts memory to find one at the moment of the first write (Linux's
default ``defrag`` setting for advised memory), that write waits for it: a
recall that caught up 256 rows into the exact scan's matrix spent 30-65 ms of
system time on one such fault during an import on a machine whose memory was
fragmented, where the same rows take under a millisecond on small pages
(docs/benchmarks-archive.md, "Recall during an import: pages"). The index's
arrays grow into memory a recall writes while a search waits for it, so they
ask for small pages.
"""

from __future__ import annotations

import mmap

import numpy as np


def zeroed(rows: int, dim: int, dtype: type[np.generic]) -> np.ndarray:
    """A (rows, dim) array of zeros in memory of its own, advised against huge pages; nothing is
    taken from the system until a row is written."""
    itemsize = np.dtype(dtype).itemsize
    size = max(rows * dim * itemsize, 1)
    memory = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if hasattr(mmap, "MADV_NOHUGEPAGE"):
        memory.madvise(mmap.MADV_NOHUGEPAGE)
    return np.frombuffer(memory, dtype=dtype, count=rows * dim).reshape(rows, dim)
