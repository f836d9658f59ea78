"""``zm serve --workers N``: N server processes on one port, kept running by this one.

This process binds the sockets clients connect to (one per worker on Linux) and one private Unix socket
per worker (in a directory only its user can enter), starts each worker with
both, and starts a worker again when one dies. Each worker is a whole server
with its own store connections, model and vector index; what they share is
the database, as separate ``zm serve`` processes do (docs/deployment.md).
``affinity.py`` keeps every MCP session on its worker.

One Python process runs Python on one core at a time; a second worker pays
when the machine has a second core the first cannot use
(docs/benchmarks-archive.md, "A second core: `zm serve --workers`, one BLAS
thread, one writers' queue").
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from zero_memory.server.affinity import Siblings
from zero_memory.server.spread import Ledger, Spread

STOP_S = 15
QUICK_DEATH_S = 10
QUICK_DEATHS = 3
"""A worker that died this many times in a row, each within QUICK_DEATH_S of its start, cannot start: all stop."""

# The worker's body: its number and siblings, its listening socket on the shared port, its private one, and
# its side of the spread of connections.
WorkerTarget = Callable[[Siblings, socket.socket, socket.socket, Spread], None]


@dataclass
class _Worker:
    index: int
    process: BaseProcess
    started: float
    quick_deaths: int = 0


def listening_socket(host: str, port: int, *, reuse_port: bool = False) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # The protocol named, not left to the kernel (0): a connection accepted here is a socket of the
    # listener's protocol, and asyncio turns Nagle's algorithm off (TCP_NODELAY) only on sockets that say
    # TCP. Without it an answer written in two pieces (headers, then body) waited for the client's delayed
    # acknowledgement: 40 ms more a call, in runs, on every connection a worker accepted and kept.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


def listening_sockets(host: str, port: int, count: int) -> list[socket.socket]:
    """The socket each worker accepts on: one of its own on the shared port (Linux), else one for all.

    A shared socket hands a burst of new connections to whichever worker wakes first, and asyncio accepts
    all that wait at each wake-up: eight clients connecting at once all landed on one of two workers, the
    other idle (docs/benchmarks-archive.md, "Calls that do not queue behind each other's writes"). With a
    socket each (``SO_REUSEPORT``) the kernel spreads new connections over the workers by a hash of their
    addresses. Only Linux spreads them so (macOS gives
    them all to the last socket bound); elsewhere the workers share one. Only processes of the same user
    may bind the port beside them.
    """
    shared = listening_socket(host, port)
    if count == 1 or sys.platform != "linux":
        return [shared] * count
    # Bound without SO_REUSEPORT first, so that a port another server holds (even one binding with it) is
    # refused as before, and port 0 gets a free port for all.
    bound = shared.getsockname()[1]
    shared.close()
    return [listening_socket(host, bound, reuse_port=True) for _ in range(count)]


def _bound_unix(paths: tuple[str, ...], kind: socket.SocketKind) -> list[socket.socket]:
    """A Unix socket of ``kind`` bound at each path."""
    bound = []
    for path in paths:
        sock = socket.socket(socket.AF_UNIX, kind)
        sock.bind(path)
        bound.append(sock)
    return bound


def run_workers(count: int, listeners: list[socket.socket], target: WorkerTarget) -> int:
    """Serve with ``count`` workers, worker i on ``listeners[i]``, until SIGINT or SIGTERM; the exit status
    (1: a worker could not start)."""
    folder = Path(tempfile.mkdtemp(prefix="zm-serve-"))  # mode 0700: only this user reaches the workers
    paths = tuple(str(folder / f"w{index}.sock") for index in range(count))
    private = _bound_unix(paths, socket.SOCK_STREAM)
    # Connections handed from one worker to another (spread.py) wait in sockets this process holds, so
    # that a worker started again after a death still gets those sent to it.
    inbox_paths = tuple(str(folder / f"w{index}.in") for index in range(count))
    inboxes = _bound_unix(inbox_paths, socket.SOCK_DGRAM)
    ledger = Ledger(count)
    spawn = multiprocessing.get_context("spawn")
    stopping = threading.Event()

    def start(index: int, quick_deaths: int = 0) -> _Worker:
        process = spawn.Process(
            target=target,
            args=(
                Siblings(index, paths),
                listeners[index],
                private[index],
                Spread(index, ledger, inbox_paths, inboxes[index]),
            ),
            name=f"zm-serve-{index}",
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
        for sock in {id(listener): listener for listener in listeners}.values():
            sock.close()
        for sock in private + inboxes:
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
