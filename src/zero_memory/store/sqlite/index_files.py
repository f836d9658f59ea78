"""The vector index's files next to the SQLite database: saved snapshots, written atomically.

A snapshot is one file whose name says what it holds:
``snapshot-<watermark>-<anchor rev>-<anchor id>.faiss`` — the clusters of
every memory change up to ``watermark``, and the memory (``anchor id``, at
``anchor rev``) that was the newest change at or below it, which tells a
database that shares that history from one that does not (a restored backup,
another file).
A snapshot is written under a temporary name, flushed to disk, then renamed:
a process killed at any point leaves either the previous snapshots or the new
one, never half a file under a snapshot's name. Temporary files of processes
that no longer run are removed, and so are the snapshots of the HNSW graph
the index kept before (``…-linked<expansion>.usearch``): the database holds
everything they did, and the clusters are built from it.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

SUFFIX = ".faiss"
NAME_RE = re.compile(r"\Asnapshot-(\d+)-(\d+)-([0-9A-Za-z_]+)\.faiss\Z")
OBSOLETE_RE = re.compile(r"\Asnapshot-.*\.usearch\Z")
TEMP_RE = re.compile(r"\A\.tmp-(\d+)-[0-9a-f]+\Z")


@dataclass(frozen=True, slots=True)
class Snapshot:
    path: Path
    watermark: int
    anchor_rev: int
    anchor_id: str

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
                    found.append(Snapshot(Path(entry.path), int(match.group(1)), int(match.group(2)), match.group(3)))
        return sorted(found, key=lambda s: (-s.watermark, s.name))

    def write(
        self,
        watermark: int,
        anchor_rev: int,
        anchor_id: str,
        save: Callable[[Path], None],
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
            final = self.folder / f"snapshot-{watermark}-{anchor_rev}-{anchor_id}{SUFFIX}"
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
        return Snapshot(final, watermark, anchor_rev, anchor_id)

    def discard(self, snapshot: Snapshot) -> None:
        with contextlib.suppress(OSError):
            snapshot.path.unlink()

    def sweep_temporaries(self) -> None:
        """Remove temporary files left by processes that were killed while saving, and obsolete snapshots."""
        for entry in _entries(self.folder):
            match = TEMP_RE.match(entry.name)
            if (match and not _running(int(match.group(1)))) or OBSOLETE_RE.match(entry.name):
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
