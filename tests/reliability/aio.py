"""Run async code from a synchronous test, whatever the calling thread is doing.

Session-scoped anyio fixtures of other test folders keep an event loop running
in pytest's main thread, so ``anyio.run`` there fails with "Already running
asyncio in this thread"; a fresh thread always has none.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import anyio

T = TypeVar("T")


def run(fn: Callable[..., Awaitable[T]], *args: Any) -> T:
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="aio") as pool:
        return pool.submit(anyio.run, fn, *args).result()
