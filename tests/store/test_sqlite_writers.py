"""One process's writers to a SQLite file queue in the process, each let in when the one before it ends."""

from __future__ import annotations

import threading
import time

import pytest

from tests.store.factories import add_users, memory, put
from zero_memory.store import Store


class Boom(Exception):
    pass


def write_on_a_thread(store: Store, text: str, began: threading.Event) -> threading.Thread:
    def write() -> None:
        with store.tx(write=True) as tx:
            began.set()
            put(tx, memory(text))

    thread = threading.Thread(target=write)
    thread.start()
    return thread


def test_a_second_writer_goes_in_when_the_first_commits(sqlite_store: Store) -> None:
    with sqlite_store.tx(write=True) as tx:
        add_users(tx, "alice")
    began = threading.Event()
    with sqlite_store.tx(write=True) as tx:
        put(tx, memory("first"))
        second = write_on_a_thread(sqlite_store, "second", began)
        assert not began.wait(0.3)  # it waits for this transaction
    second.join(timeout=30)
    assert began.is_set()
    with sqlite_store.tx() as tx:
        assert sorted(m.content for m in tx.iter_memories()) == ["first", "second"]


def test_a_rolled_back_writer_lets_the_next_one_in(sqlite_store: Store) -> None:
    with sqlite_store.tx(write=True) as tx:
        add_users(tx, "alice")
    with pytest.raises(Boom), sqlite_store.tx(write=True) as tx:
        put(tx, memory("doomed"))
        raise Boom
    began = threading.Event()
    write_on_a_thread(sqlite_store, "next", began).join(timeout=30)
    assert began.is_set()
    with sqlite_store.tx() as tx:
        assert [m.content for m in tx.iter_memories()] == ["next"]


def test_readers_do_not_queue_behind_a_writer(sqlite_store: Store) -> None:
    with sqlite_store.tx(write=True) as tx:
        add_users(tx, "alice")
        put(tx, memory("committed"))
    seen: list[int] = []
    with sqlite_store.tx(write=True) as tx:
        put(tx, memory("pending"))

        def read() -> None:
            with sqlite_store.tx() as reader:
                seen.append(reader.count_memories())

        reader = threading.Thread(target=read)
        started = time.monotonic()
        reader.start()
        reader.join(timeout=30)
        assert time.monotonic() - started < 10
    assert seen == [1]


def test_many_threads_writing_at_once_all_commit(sqlite_store: Store) -> None:
    with sqlite_store.tx(write=True) as tx:
        add_users(tx, "alice")
    events = [threading.Event() for _ in range(16)]
    threads = [write_on_a_thread(sqlite_store, f"text {n}", events[n]) for n in range(16)]
    for thread in threads:
        thread.join(timeout=60)
    with sqlite_store.tx() as tx:
        assert tx.count_memories() == 16
