"""Connections spread evenly over the workers of ``zm serve --workers N``.

The kernel hands each new connection to one worker's socket by a hash of its
addresses, so a few long-lived connections seldom split evenly: eight over two
workers split four and four about one time in four, six and two or worse as
often (docs/benchmarks-archive.md, "Connections spread evenly over the
workers"), and the worker holding six runs short of a core while the other
idles. So a worker that accepts a connection while it
holds more than the least loaded of its siblings passes it on, before reading a
byte of it: the descriptor itself goes to that sibling over a Unix datagram
socket (``SCM_RIGHTS``), and the sibling serves it as if it had accepted it.
Nothing the client sees changes; MCP sessions still reach their worker
(``affinity.py``), since a session belongs to the worker that opened it,
whichever connection carries its requests.

The counts live in memory the workers share (``Ledger``), and each cell is
written by one process only: what a worker holds, what it sent to each
sibling, what it adopted from each. A connection sent and not yet adopted
counts for its receiver, so a burst of connections is not all sent to one
sibling before it takes the first. A worker started again after a death
resets what it holds (its connections died with it); the sockets of the
hand-over belong to ``zm serve``'s first process, so connections in flight
reach the new worker.
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import socket
from dataclasses import dataclass, field
from multiprocessing.sharedctypes import RawArray
from typing import Any, ClassVar

_TCP = (socket.AF_INET, socket.AF_INET6)
_MAX_FDS = 16


class Ledger:
    """Counts shared by the workers: held[i], sent[i→j], adopted[j←i]; each cell written by one worker."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.cells: Any = RawArray("q", count + 2 * count * count)

    def _sent(self, source: int, target: int) -> int:
        return self.count + source * self.count + target

    def _adopted(self, target: int, source: int) -> int:
        return self.count + self.count * self.count + target * self.count + source

    def held(self, worker: int) -> int:
        return int(self.cells[worker])

    def load(self, worker: int) -> int:
        """The connections a worker holds, and those sent to it that it has not taken yet."""
        cells = self.cells
        in_flight = sum(
            cells[self._sent(source, worker)] - cells[self._adopted(worker, source)] for source in range(self.count)
        )
        return int(cells[worker] + in_flight)

    def add_held(self, worker: int, change: int) -> None:
        self.cells[worker] += change

    def reset(self, worker: int) -> None:
        self.cells[worker] = 0

    def count_sent(self, source: int, target: int) -> None:
        self.cells[self._sent(source, target)] += 1

    def count_adopted(self, target: int, source: int) -> None:
        self.cells[self._adopted(target, source)] += 1


@dataclass
class Spread:
    """One worker's side of the spread: the shared ledger, its inbox, and its siblings' inbox paths."""

    index: int
    ledger: Ledger
    inboxes: tuple[str, ...]
    inbox: socket.socket
    _outbox: socket.socket | None = field(default=None, repr=False)

    def start(self) -> None:
        """In the worker, before it accepts: it holds nothing yet (a worker before it may have held some)."""
        self.ledger.reset(self.index)
        self.inbox.setblocking(False)

    def target(self) -> int | None:
        """The sibling a new connection goes to, or None to keep it here."""
        siblings = [worker for worker in range(self.ledger.count) if worker != self.index]
        if not siblings:
            return None
        loads = {worker: self.ledger.load(worker) for worker in siblings}
        least = min(siblings, key=lambda worker: (loads[worker], worker))
        return least if self.ledger.load(self.index) > loads[least] else None

    def hand_over(self, fd: int, target: int) -> bool:
        """Send the connection ``fd`` to worker ``target``; False (keep it) if it cannot take it now."""
        if self._outbox is None:
            self._outbox = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            self._outbox.setblocking(False)
        try:
            # (socket.send_fds drops its address before Python 3.13: sendmsg it is.)
            rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))]
            self._outbox.sendmsg([b"%d" % self.index], rights, 0, self.inboxes[target])
        except OSError:  # its inbox is full, or gone: this worker serves the connection itself
            return False
        self.ledger.count_sent(self.index, target)
        return True

    def hold(self, change: int) -> None:
        self.ledger.add_held(self.index, change)

    def receive(self) -> list[socket.socket]:
        """The connections siblings sent, now counted as held here."""
        taken: list[socket.socket] = []
        while True:
            try:
                message, fds, _, _ = socket.recv_fds(self.inbox, 32, _MAX_FDS)
            except (BlockingIOError, InterruptedError):
                return taken
            for fd in fds:
                taken.append(socket.socket(fileno=fd))
            if not fds:
                continue
            self.hold(len(fds))
            with contextlib.suppress(ValueError, IndexError):
                source = int(message)
                for _ in fds:
                    self.ledger.count_adopted(self.index, source)

    def close(self) -> None:
        if self._outbox is not None:
            self._outbox.close()


class Balanced(asyncio.Protocol):
    """An HTTP connection of one worker: handed to a less loaded sibling when it arrives, else served here.

    Wraps uvicorn's own protocol (``inner``) and counts the connections the worker holds; connections of
    the private Unix socket (requests other workers forward) are neither counted nor handed over.
    """

    spread: ClassVar[Spread]
    base: ClassVar[type[asyncio.Protocol]]

    def __init__(self, *args: Any, adopted: bool = False, **kwargs: Any) -> None:
        self.inner: asyncio.Protocol | None = self.base(*args, **kwargs)
        self.adopted = adopted
        self.counted = adopted  # an adopted connection was counted as it was received

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in _TCP and not self.adopted:
            target = self.spread.target()
            if target is not None and self.spread.hand_over(sock.fileno(), target):
                self.inner = None
                transport.close()  # this process's descriptor only: the sibling holds the connection now
                return
            self.spread.hold(1)
            self.counted = True
        assert self.inner is not None
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        if self.inner is not None:
            self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received() if self.inner is not None else None

    def pause_writing(self) -> None:
        if self.inner is not None:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.inner is not None:
            self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        if self.counted:
            self.counted = False
            self.spread.hold(-1)
        if self.inner is not None:
            self.inner.connection_lost(exc)


def balanced_protocol(spread: Spread, base: type[asyncio.Protocol]) -> type[Balanced]:
    """The protocol class one worker's uvicorn makes its connections with."""
    return type("BalancedHTTP", (Balanced,), {"spread": spread, "base": base})


def serve(config: Any, spread: Spread, sockets: list[socket.socket]) -> None:
    """Run uvicorn on ``sockets``, its ``config`` made with ``http=balanced_protocol(spread, ...)``: the
    connections it accepts may go to a sibling, those siblings send are served here."""
    import uvicorn

    spread.start()

    class SpreadServer(uvicorn.Server):
        adopting: set[asyncio.Task[Any]]

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            self.adopting = set()
            asyncio.get_running_loop().add_reader(spread.inbox.fileno(), self.adopt)

        def adopt(self) -> None:
            for sock in spread.receive():
                task = asyncio.get_running_loop().create_task(self.serve_adopted(sock))
                self.adopting.add(task)
                task.add_done_callback(self.adopting.discard)

        async def serve_adopted(self, sock: socket.socket) -> None:
            loop = asyncio.get_running_loop()

            def protocol() -> asyncio.Protocol:
                return self.config.http_protocol_class(  # type: ignore[call-arg]
                    config=self.config, server_state=self.server_state, app_state=self.lifespan.state, adopted=True
                )

            try:
                await loop.connect_accepted_socket(protocol, sock)
            except OSError:  # the client went away meanwhile
                spread.hold(-1)
                sock.close()

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            asyncio.get_running_loop().remove_reader(spread.inbox.fileno())
            await super().shutdown(sockets)

    try:
        SpreadServer(config).run(sockets=sockets)
    finally:
        spread.close()
