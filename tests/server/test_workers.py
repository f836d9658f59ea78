"""The sockets ``zm serve --workers N`` accepts on: one per worker on one port (Linux), refused when taken."""

from __future__ import annotations

import asyncio
import socket
import sys

import pytest

from zero_memory.server.workers import listening_socket, listening_sockets

linux = pytest.mark.skipif(sys.platform != "linux", reason="the kernel spreads connections over sockets on Linux")


@linux
def test_each_worker_listens_on_a_socket_of_its_own_on_one_port() -> None:
    sockets = listening_sockets("127.0.0.1", 0, 3)
    try:
        assert len({id(s) for s in sockets}) == 3
        assert len({s.getsockname() for s in sockets}) == 1
        for sock in sockets:
            sock.listen()
        # Each socket takes connections: they are spread by the kernel, not taken by whoever wakes first.
        port = sockets[0].getsockname()[1]
        clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(64)]
        accepted = []
        for sock in sockets:
            sock.setblocking(False)
            count = 0
            while True:
                try:
                    conn, _ = sock.accept()
                except BlockingIOError:
                    break
                conn.close()
                count += 1
            accepted.append(count)
        for client in clients:
            client.close()
        assert sum(accepted) == 64
        assert all(count > 0 for count in accepted)
    finally:
        for sock in sockets:
            sock.close()


def test_one_worker_has_one_socket() -> None:
    (sock,) = listening_sockets("127.0.0.1", 0, 1)
    sock.close()


@linux
def test_a_port_held_by_another_server_is_refused_even_with_port_reuse() -> None:
    held = listening_sockets("127.0.0.1", 0, 2)
    try:
        for sock in held:
            sock.listen()
        with pytest.raises(OSError):
            listening_sockets("127.0.0.1", held[0].getsockname()[1], 2)
    finally:
        for sock in held:
            sock.close()


def test_a_connection_accepted_on_a_workers_socket_sends_small_writes_at_once() -> None:
    """asyncio turns Nagle's algorithm off on the TCP connections its servers accept, if their socket says TCP:
    a worker's answers, written in two pieces, must not wait for the client's delayed acknowledgement."""

    async def accepted_nodelay() -> int:
        listener = listening_socket("127.0.0.1", 0)
        listener.listen()
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        class Probe(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                sock = transport.get_extra_info("socket")
                seen.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        server = await asyncio.get_running_loop().create_server(Probe, sock=listener)  # takes the socket
        try:
            _, writer = await asyncio.open_connection(*listener.getsockname())
            nodelay = await asyncio.wait_for(seen, 10)
            writer.close()
            return nodelay
        finally:
            server.close()

    assert asyncio.run(accepted_nodelay()) == 1
