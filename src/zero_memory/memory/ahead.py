"""Work ahead on threads, hand results back in order: the next batches of an import are guarded and
embedded while the caller writes the current one.

A thread here runs a batch's content guard and then waits for the model's pass, which an import hands
to a forked child process (embedding/apart.py): the pass holds the GIL for much of its time, so on a
thread it would share the caller's core. At most ``ahead`` items are being worked on past the one handed
back, so memory stays bounded whatever the length of ``items``.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


@contextmanager
def worked_ahead(work: Callable[[T], R], items: Iterable[T], *, ahead: int) -> Iterator[Iterator[tuple[T, R]]]:
    """``(item, work(item))`` for every item in order; ``work`` runs on up to ``ahead`` threads.

    An exception raised by ``work`` is raised where its result would have been handed back. Leaving the
    block, by the end of the items or by an exception, cancels the work not started and waits for the
    work under way, so no thread outlives it. ``ahead=0`` works in the caller's thread, one item at a time.
    """
    if ahead <= 0:
        yield ((item, work(item)) for item in items)
        return
    pool = ThreadPoolExecutor(max_workers=ahead, thread_name_prefix="zm-ahead")
    pending: deque[tuple[T, Future[R]]] = deque()

    def results() -> Iterator[tuple[T, R]]:
        for item in items:
            pending.append((item, pool.submit(work, item)))
            if len(pending) > ahead:
                first, future = pending.popleft()
                yield first, future.result()
        while pending:
            first, future = pending.popleft()
            yield first, future.result()

    try:
        yield results()
    finally:
        for _, future in pending:
            future.cancel()
        pool.shutdown(wait=True)
