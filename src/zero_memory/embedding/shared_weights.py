"""The bundled model's dense weights read from files every process maps: one copy in memory and in the caches.

``zm serve --workers N`` runs N processes with the model each. Loaded from the
package, each holds its own 11 MB of dense weights, and a pass over one
sentence streams all of them through the CPU's caches, where the copies of
the processes crowd each other out. Read from a memory-mapped file per array,
the processes share the page cache's one copy. Two processes embedding one
sentence at a time side by side (one BLAS thread, load 3.6–5.3): 2.10–2.20 ms
of CPU a text each with their own copies, 1.83–1.88 ms with the shared one.

The files are written once per package version under the data directory,
each whole before it is renamed into place, so processes starting together
never map half a file. A file that cannot be written or read, or that does
not hold exactly the loaded array, leaves the weights as loaded.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

MIN_BYTES = 64 * 1024  # biases and norms are not worth a file each


def share(holder: Any, directory: Path) -> None:
    """Replace ``holder``'s large float32 arrays (attributes, or lists of them) with read-only shared maps."""
    for name, value in list(vars(holder).items()):
        if _large(value):
            setattr(holder, name, mapped(value, directory / f"{name}.npy"))
        elif isinstance(value, list) and value and all(isinstance(item, np.ndarray) for item in value):
            arrays = [mapped(a, directory / f"{name}.{i}.npy") if _large(a) else a for i, a in enumerate(value)]
            setattr(holder, name, arrays)


def mapped(array: np.ndarray, path: Path) -> np.ndarray:
    """``array`` as read back from ``path`` (written there first if absent), or ``array`` itself if that fails."""
    try:
        if not path.exists():
            _write(array, path)
        view = np.load(path, mmap_mode="r")
    except (OSError, ValueError):
        return array
    if view.shape != array.shape or view.dtype != array.dtype or not np.array_equal(view, array):
        return array
    return np.asarray(view)


def _large(value: Any) -> bool:
    return isinstance(value, np.ndarray) and value.dtype == np.float32 and value.nbytes >= MIN_BYTES


def _write(array: np.ndarray, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            np.save(out, array)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
