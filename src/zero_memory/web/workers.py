"""``zm serve --workers N``: N server processes on one listening socket, kept running by this one.

This process binds the socket clients connect to and one private Unix socket
per worker (in a directory only its user can enter), starts each worker with
both, and starts a worker again when one dies. Each worker is a whole server
with its own store connections, model and vector index; what they share is
the database, as separate ``zm serve`` processes do (docs/deployment.md).
``web/affinity.py`` keeps every MCP session on its worker.

One Python process runs Python on one core at a time; a second worker pays
when the machine has a second core the first cannot use (docs/benchmarks.md).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import socket
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from zero_memory.web.affinity import Siblings

STOP_S = 15
QUICK_DEATH_S = 10
QUICK_DEATHS = 3
"""A worker that died this many times in a row, each within QUICK_DEATH_S of its start, cannot start: all stop."""

# The worker's body: its number and siblings, the shared listening socket, its private one.
WorkerTarget = Callable[[Siblings, socket.socket, socket.socket], None]


@dataclass
class _Worker:
    index: int
    process: BaseProcess
    started: float
    quick_deaths: int = 0


def listening_socket(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


def run_workers(count: int, listener: socket.socket, target: WorkerTarget) -> int:
    """Serve ``listener`` with ``count`` workers until SIGINT or SIGTERM; the exit status (1: a worker could
    not start)."""
    folder = Path(tempfile.mkdtemp(prefix="zm-serve-"))  # mode 0700: only this user reaches the workers
    paths = tuple(str(folder / f"w{index}.sock") for index in range(count))
    private = []
    for path in paths:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(path)
        private.append(sock)
    spawn = multiprocessing.get_context("spawn")
    stopping = threading.Event()

    def start(index: int, quick_deaths: int = 0) -> _Worker:
        process = spawn.Process(
            target=target, args=(Siblings(index, paths), listener, private[index]), name=f"zm-serve-{index}"
        )
        process.start()
        return _Worker(index, process, time.monotonic(), quick_deaths)

    def stop(signum: int, frame: Any) -> None:
        stopping.set()

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    workers = [start(index) for index in range(count)]
    status = 0
    try:
        while not stopping.is_set():
            sentinels = [worker.process.sentinel for worker in workers]
            ended = multiprocessing.connection.wait(sentinels, timeout=0.5)
            for worker in [w for w in workers if w.process.sentinel in ended]:
                if stopping.is_set():
                    break
                quick = worker.quick_deaths + 1 if time.monotonic() - worker.started < QUICK_DEATH_S else 0
                if quick >= QUICK_DEATHS:
                    status = 1
                    stopping.set()
                    break
                workers[worker.index] = start(worker.index, quick)
    finally:
        _stop_all(workers)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        listener.close()
        for sock in private:
            sock.close()
        shutil.rmtree(folder, ignore_errors=True)
    return status


def _stop_all(workers: list[_Worker]) -> None:
    """SIGTERM to every worker (uvicorn's graceful shutdown), then SIGKILL to any still running after STOP_S."""
    for worker in workers:
        if worker.process.is_alive() and worker.process.pid is not None:
            os.kill(worker.process.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_S
    for worker in workers:
        worker.process.join(max(0.0, deadline - time.monotonic()))
        if worker.process.is_alive():
            worker.process.kill()
            worker.process.join(5)
