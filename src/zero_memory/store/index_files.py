"""The vector index's files next to the SQLite database: saved snapshots, written atomically.

A snapshot is one file whose name says what it holds:
``snapshot-<watermark>-<anchor rev>-<anchor id>-linked<expansion>.usearch`` —
the graph of every memory change up to ``watermark``, the memory (``anchor
id``, at ``anchor rev``) that was the newest change at or below it, which
tells a database that shares that history from one that does not (a restored
backup, another file), and the expansion its nodes were linked with, which
sets the walk that searches it (names written before it was recorded lack
``-linked<expansion>``).
A snapshot is written under a temporary name, flushed to disk, then renamed:
a process killed at any point leaves either the previous snapshots or the new
one, never half a file under a snapshot's name. Temporary files of processes
that no longer run are removed.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

SUFFIX = ".usearch"
NAME_RE = re.compile(r"\Asnapshot-(\d+)-(\d+)-([0-9A-Za-z_]+)(?:-linked(\d+))?\.usearch\Z")
TEMP_RE = re.compile(r"\A\.tmp-(\d+)-[0-9a-f]+\Z")


@dataclass(frozen=True, slots=True)
class Snapshot:
    path: Path
    watermark: int
    anchor_rev: int
    anchor_id: str
    linked_with: int | None = None  # None: not recorded

    @property
    def name(self) -> str:
        return self.path.name


class IndexFiles:
    """The folder of snapshots for one database file (``zm.db`` → ``zm.db-index/``)."""

    def __init__(self, database: Path) -> None:
        self.folder = database.with_name(database.name + "-index")

    def snapshots(self) -> list[Snapshot]:
        """Every snapshot, newest (highest watermark) first."""
        found = []
        with contextlib.suppress(FileNotFoundError):
            for entry in os.scandir(self.folder):
                match = NAME_RE.match(entry.name)
                if match:
                    linked = int(match.group(4)) if match.group(4) else None
                    found.append(
                        Snapshot(Path(entry.path), int(match.group(1)), int(match.group(2)), match.group(3), linked)
                    )
        return sorted(found, key=lambda s: (-s.watermark, s.name))

    def write(
        self,
        watermark: int,
        anchor_rev: int,
        anchor_id: str,
        save: Callable[[Path], None],
        *,
        linked_with: int | None = None,
    ) -> Snapshot:
        """Save a snapshot atomically, then remove older ones."""
        if not re.fullmatch(r"[0-9A-Za-z_]+", anchor_id):
            raise ValueError("anchor id: letters, digits and underscores only")
        self.folder.mkdir(parents=True, exist_ok=True)
        temp = self.folder / f".tmp-{os.getpid()}-{secrets.token_hex(4)}"
        try:
            save(temp)
            with open(temp, "rb") as handle:
                os.fsync(handle.fileno())
            linking = f"-linked{linked_with}" if linked_with is not None else ""
            final = self.folder / f"snapshot-{watermark}-{anchor_rev}-{anchor_id}{linking}{SUFFIX}"
            os.replace(temp, final)
        except BaseException:
            with contextlib.suppress(OSError):
                temp.unlink()
            raise
        _fsync_folder(self.folder)
        for older in self.snapshots():
            if older.watermark < watermark:
                self.discard(older)
        self.sweep_temporaries()
        return Snapshot(final, watermark, anchor_rev, anchor_id, linked_with)

    def discard(self, snapshot: Snapshot) -> None:
        with contextlib.suppress(OSError):
            snapshot.path.unlink()

    def sweep_temporaries(self) -> None:
        """Remove temporary files left by processes that were killed while saving."""
        for entry in _entries(self.folder):
            match = TEMP_RE.match(entry.name)
            if match and not _running(int(match.group(1))):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def _entries(folder: Path) -> Iterator[os.DirEntry[str]]:
    with contextlib.suppress(FileNotFoundError), os.scandir(folder) as entries:
        yield from entries


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX); not possible on every platform, and then not needed."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
