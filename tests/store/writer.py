"""Another process on the same store, for the multi-process tests.

``python -m tests.store.writer insert URL TAG COUNT GO_FILE`` waits for GO_FILE,
then inserts COUNT memories of alice's, one transaction each, with contents
``TAG 0`` … and vectors ``vector_for(TAG n)``.
``python -m tests.store.writer stream URL TAG STOP_FILE`` inserts ``TAG 0``, ``TAG 1`` …
one transaction each until STOP_FILE exists (at most 100,000 rows or two minutes).
``python -m tests.store.writer hold URL NAME`` takes a named lock, prints
``held`` and sleeps until killed.
"""

from __future__ import annotations

import sys
import time
import zlib
from pathlib import Path

import numpy as np

from tests.store.factories import DIM, memory, put, random_unit
from zero_memory.store import open_store


def vector_for(content: str) -> np.ndarray:
    return random_unit(zlib.crc32(content.encode()))


def insert(url: str, tag: str, count: int, go: Path) -> None:
    store = open_store(url, dim=DIM)
    try:
        deadline = time.monotonic() + 60
        while not go.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        for n in range(count):
            content = f"{tag} {n}"
            with store.tx(write=True) as tx:
                tx.serialize(f"writer:{n % 7}")
                put(tx, memory(content, minutes=n), vector_for(content))
    finally:
        store.close()


def stream(url: str, tag: str, stop: Path) -> None:
    store = open_store(url, dim=DIM)
    try:
        deadline = time.monotonic() + 120
        for n in range(100_000):
            if stop.exists() or time.monotonic() > deadline:
                return
            content = f"{tag} {n}"
            with store.tx(write=True) as tx:
                put(tx, memory(content, minutes=n), vector_for(content))
    finally:
        store.close()


def hold(url: str, name: str) -> None:
    store = open_store(url, dim=DIM)
    with store.advisory_lock(name) as taken:
        print("held" if taken else "busy", flush=True)
        time.sleep(600)


def main(argv: list[str]) -> None:
    command, url, *rest = argv
    if command == "insert":
        insert(url, rest[0], int(rest[1]), Path(rest[2]))
    elif command == "stream":
        stream(url, rest[0], Path(rest[1]))
    elif command == "hold":
        hold(url, rest[0])
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
