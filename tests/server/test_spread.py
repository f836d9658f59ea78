"""Connections spread over the workers of ``zm serve --workers N``: the ledger and the hand-over (server/spread.py)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from zero_memory.server.spread import Ledger, Spread


@pytest.fixture
def spreads(tmp_path: Path) -> Iterator[list[Spread]]:
    """Two workers' sides of the spread, as ``zm serve --workers 2`` makes them, in this one process."""
    paths = tuple(str(tmp_path / f"w{index}.in") for index in range(2))
    inboxes = []
    for path in paths:
        inbox = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        inbox.bind(path)
        inboxes.append(inbox)
    ledger = Ledger(2)
    made = [Spread(index, ledger, paths, inboxes[index]) for index in range(2)]
    for spread in made:
        spread.start()
    yield made
    for spread in made:
        spread.close()
    for inbox in inboxes:
        inbox.close()


def connected_pair() -> tuple[socket.socket, socket.socket]:
    """A TCP connection over loopback: the client's end and the end a server accepted."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        client = socket.create_connection(listener.getsockname())
        accepted, _ = listener.accept()
    return client, accepted


def test_a_worker_keeps_connections_while_it_holds_no_more_than_a_sibling(spreads: list[Spread]) -> None:
    first, second = spreads
    assert first.target() is None
    first.hold(1)
    assert first.target() == 1  # one held here, none there: the next goes there
    second.hold(1)
    assert first.target() is None
    assert second.target() is None
    second.hold(1)
    assert second.target() == 0


def test_a_connection_handed_over_is_served_by_the_sibling_and_counted_there(spreads: list[Spread]) -> None:
    first, second = spreads
    first.hold(1)
    client, accepted = connected_pair()
    try:
        assert first.hand_over(accepted.fileno(), 1)
        accepted.close()  # the sender's descriptor: the connection lives on in the message
        # Sent and not yet taken: it counts for the receiver already, so a burst is not all sent one way.
        assert first.ledger.load(1) == 1
        assert first.target() is None
        (adopted,) = second.receive()
        assert first.ledger.held(1) == 1
        assert first.ledger.load(1) == 1
        client.sendall(b"ping")
        adopted.setblocking(True)
        assert adopted.recv(4) == b"ping"
        adopted.sendall(b"pong")
        assert client.recv(4) == b"pong"
        adopted.close()
    finally:
        client.close()
    assert second.receive() == []


def test_a_worker_started_again_holds_nothing_and_takes_what_was_sent_to_it(spreads: list[Spread]) -> None:
    first, second = spreads
    second.hold(3)
    first.hold(4)
    client, accepted = connected_pair()
    try:
        assert first.hand_over(accepted.fileno(), 1)
        accepted.close()
        # The second worker dies and is started again: its connections died with it, the one in flight did not.
        second.start()
        assert first.ledger.load(1) == 1
        (adopted,) = second.receive()
        adopted.close()
        assert first.ledger.load(1) == 1
    finally:
        client.close()


def test_a_full_or_missing_inbox_keeps_the_connection_here(tmp_path: Path) -> None:
    ledger = Ledger(2)
    inbox = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    inbox.bind(str(tmp_path / "w0.in"))
    spread = Spread(0, ledger, (str(tmp_path / "w0.in"), str(tmp_path / "gone.in")), inbox)
    spread.start()
    client, accepted = connected_pair()
    try:
        assert not spread.hand_over(accepted.fileno(), 1)
        assert ledger.load(1) == 0
    finally:
        for sock in (client, accepted, inbox):
            sock.close()
        spread.close()


def test_a_worker_counts_the_connections_on_their_way_to_it(spreads: list[Spread]) -> None:
    """A burst: connections sent to a worker and not yet taken count as its own when it decides."""
    first, second = spreads
    pairs = [connected_pair() for _ in range(2)]
    try:
        first.hold(3)
        for _, accepted in pairs:
            assert first.hand_over(accepted.fileno(), 1)
            accepted.close()
        second.hold(1)
        # The second holds one and has two on their way: three, like the first. Its next one it keeps...
        assert second.target() is None
        second.hold(1)
        # ...and the one after goes to the first.
        assert second.target() == 0
        for adopted in second.receive():
            adopted.close()
    finally:
        for client, _ in pairs:
            client.close()
