"""Another process on the same store, for the multi-process tests.

``python -m tests.store.writer insert URL TAG COUNT GO_FILE`` waits for GO_FILE,
then inserts COUNT memories of alice's, one transaction each, with contents
``TAG 0`` … and vectors ``vector_for(TAG n)``.
``python -m tests.store.writer stream URL TAG STOP_FILE`` inserts ``TAG 0``, ``TAG 1`` …
one transaction each until STOP_FILE exists (at most 100,000 rows or two minutes).
``python -m tests.store.writer hold URL NAME`` takes a named lock, prints
``held`` and sleeps until killed.
``python -m tests.store.writer share URL TAG COUNT FOLDER TAGS`` (SQLite, the
graph index): searches once (so its index is live), inserts COUNT memories
``TAG n`` searching after each, marks FOLDER/TAG done, waits until every tag
of the comma-separated TAGS is done, then prints as JSON how many memories of
each tag it finds through its index.
``python -m tests.store.writer save-forever URL`` (SQLite, the graph index):
inserts memories and saves index snapshots, printing ``saving`` before each
save, until killed.
``python -m tests.store.writer build-forever URL`` (SQLite, the graph built in
the background): searches (which starts the build), prints ``building``, then
inserts a memory, searches for it and saves the index once the graph is taken,
again and again until killed.
``python -m tests.store.writer bulk-load URL TAG COUNT`` (PostgreSQL): starts a
bulk load (the HNSW index dropped), commits COUNT memories ``TAG n``, prints
``loading`` and sleeps until killed.
"""

from __future__ import annotations

import json
import sys
import time
import zlib
from pathlib import Path

import numpy as np

from tests.store.factories import DIM, AsSystem, memory, put, random_unit
from zero_memory.store import open_store
from zero_memory.store.sqlite.adapter import SQLiteStore

INDEXED = {"ann_min_rows": 0, "exact_filter_rows": 0}
# The graph for everything, built on a thread of its own while searches scan the rows.
BUILDING = {"ann_min_rows": 0, "exact_filter_rows": 0, "background_rows": 0}


def vector_for(content: str) -> np.ndarray:
    return random_unit(zlib.crc32(content.encode()))


def insert(url: str, tag: str, count: int, go: Path) -> None:
    store = AsSystem(open_store(url, dim=DIM))
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
    store = AsSystem(open_store(url, dim=DIM))
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


def found_by_index(store: SQLiteStore, contents: list[str]) -> int:
    """How many of these memories a search for each one's own vector returns first."""
    found = 0
    for content in contents:
        with store.tx() as tx:
            hits = tx.similar(vector_for(content), floor=0.999, limit=1)
        found += bool(hits) and hits[0].memory.content == content
    return found


def share(url: str, tag: str, count: int, folder: Path, tags: list[str]) -> None:
    store = SQLiteStore.open(url, dim=DIM, **INDEXED)
    try:
        found_by_index(store, ["warm"])
        for n in range(count):
            content = f"{tag} {n}"
            with store.tx(write=True) as tx:
                put(tx, memory(content, minutes=n), vector_for(content))
            found_by_index(store, [content])
        (folder / f"done-{tag}").touch()
        deadline = time.monotonic() + 120
        while not all((folder / f"done-{t}").exists() for t in tags) and time.monotonic() < deadline:
            time.sleep(0.01)
        print(json.dumps({t: found_by_index(store, [f"{t} {n}" for n in range(count)]) for t in tags}), flush=True)
    finally:
        store.close()


def save_forever(url: str) -> None:
    store = SQLiteStore.open(url, dim=DIM, **INDEXED)
    n = 0
    while True:
        with store.tx(write=True) as tx:
            for _ in range(200):
                content = f"saved {n}"
                put(tx, memory(content, minutes=n), vector_for(content))
                n += 1
        found_by_index(store, [f"saved {n - 1}"])
        print("saving", flush=True)
        store.save_index()


def build_forever(url: str) -> None:
    store = SQLiteStore.open(url, dim=DIM, **BUILDING)
    found_by_index(store, ["warm"])
    print("building", flush=True)
    n = 0
    while True:
        content = f"built {n}"
        with store.tx(write=True) as tx:
            put(tx, memory(content, minutes=n), vector_for(content))
        found_by_index(store, [content])
        if store.index.uses_clusters:
            store.save_index()
        n += 1


def bulk_load(url: str, tag: str, count: int) -> None:
    store = AsSystem(open_store(url, dim=DIM))
    with store.bulk_load(1_000_000):
        for n in range(count):
            content = f"{tag} {n}"
            with store.tx(write=True) as tx:
                put(tx, memory(content, minutes=n), vector_for(content))
        print("loading", flush=True)
        time.sleep(600)


def main(argv: list[str]) -> None:
    command, url, *rest = argv
    if command == "insert":
        insert(url, rest[0], int(rest[1]), Path(rest[2]))
    elif command == "stream":
        stream(url, rest[0], Path(rest[1]))
    elif command == "hold":
        hold(url, rest[0])
    elif command == "share":
        share(url, rest[0], int(rest[1]), Path(rest[2]), rest[3].split(","))
    elif command == "save-forever":
        save_forever(url)
    elif command == "build-forever":
        build_forever(url)
    elif command == "bulk-load":
        bulk_load(url, rest[0], int(rest[1]))
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
