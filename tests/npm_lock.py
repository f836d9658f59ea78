"""One ``npm`` install into a folder at a time.

scripts/test.sh runs the suite in several worker processes (pytest-xdist): on a clean clone two of them
may reach tests/js or tests/clients, whose packages are installed on first use, together. The lock is a
file in the temporary directory named after the folder, held with ``flock`` (released if a worker dies).
"""

from __future__ import annotations

import fcntl
import hashlib
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def installing(folder: Path) -> Iterator[None]:
    """Held while installing into ``folder``; check again inside whether another worker installed it."""
    digest = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:16]
    with open(Path(tempfile.gettempdir()) / f"zm-npm-{digest}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
