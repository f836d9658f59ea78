"""``zm serve --workers 2``: two processes on one port, one data directory.

Clients on the handshake protocol keep their MCP session whichever process
accepts each of their connections; every acknowledged write is stored once;
each scheduled tick runs once; a worker that dies is started again; the login
link works on whichever process gets it, once.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import re
import signal
import socket
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests.mcp.helpers import Deployment, base_env, call_ok, connect, start_server, stop_server, unique, zm
from tests.store.factories import AsSystem
from tests.store.test_pg_processes import check_each_tick_ran_once, wait_for_ticks
from zero_memory.store import open_store

pytestmark = pytest.mark.slow

# The system call that copies another process's descriptor (Linux 5.6).
PIDFD_GETFD = 438
# A tick every 1.8 seconds.
TICK_HOURS = 0.0005
HANDSHAKE = "2025-11-25"
# An initialize request of the handshake protocol: the worker that answers it opens the session.
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": HANDSHAKE,
        "capabilities": {},
        "clientInfo": {"name": "workers-test", "version": "1"},
    },
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[tuple[Deployment, int]]:
    """``zm serve --workers 2`` with users alice and bob and a tick every 1.8 s; the deployment and its pid."""
    env = {**base_env(tmp_path), "ZM_HYGIENE_SCAN_INTERVAL_HOURS": str(TICK_HOURS)}
    tokens = {name: json.loads(zm(env, "user", "add", name, "--json").stdout)["token"] for name in ("alice", "bob")}
    log = tmp_path / "serve.log"
    process, url = start_server(env, log, "--workers", "2")
    try:
        yield Deployment(home=tmp_path, env=env, tokens=tokens, url=url, log=log), process.pid
    finally:
        stop_server(process)


class Session:
    """A handshake-protocol MCP session whose every request goes over a new connection."""

    def __init__(self, deployment: Deployment, user: str) -> None:
        self.url = f"{deployment.url}/mcp"
        self.headers = {
            "Authorization": f"Bearer {deployment.tokens[user]}",
            "Accept": "application/json, text/event-stream",
        }
        self.id = ""
        self.count = 0

    def post(self, body: dict[str, Any]) -> httpx.Response:
        headers = dict(self.headers)
        if self.id:
            headers.update({"mcp-session-id": self.id, "mcp-protocol-version": HANDSHAKE})
        with httpx.Client(timeout=60) as fresh:
            return fresh.post(self.url, json=body, headers=headers)

    def open(self) -> str:
        answer = self.post(INITIALIZE)
        assert answer.status_code == 200, answer.text
        self.id = answer.headers["mcp-session-id"]
        assert self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code == 202
        return self.id

    def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.count += 1
        params = {"name": tool, "arguments": arguments}
        answer = self.post({"jsonrpc": "2.0", "id": self.count, "method": "tools/call", "params": params})
        assert answer.status_code == 200, (answer.status_code, answer.text)
        data = [line[5:] for line in answer.text.splitlines() if line.startswith("data:")]
        result = json.loads(data[-1] if data else answer.text)["result"]
        assert not result.get("isError"), result
        structured: dict[str, Any] = result["structuredContent"]
        return structured


def worker_pids(server_pid: int) -> list[int]:
    children: list[int] = []
    for task in Path(f"/proc/{server_pid}/task").iterdir():
        children += [int(pid) for pid in (task / "children").read_text().split()]
    return [pid for pid in children if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()]


def remember(session: Session, text: str) -> tuple[str, dict[str, Any]]:
    return text, session.call("remember", {"content": text, "kind": "fact", "scope": "personal"})


@pytest.mark.anyio
async def test_sessions_writes_and_ticks_with_two_workers(workers: tuple[Deployment, int]) -> None:
    deployment, _ = workers
    started = time.monotonic()
    marker = unique()
    # Sessions over fresh connections, until both workers have opened some.
    sessions: list[Session] = []
    while len({s.id.split(".")[0] for s in sessions}) < 2:
        assert len(sessions) < 40, "every session opened on one worker"
        session = Session(deployment, "alice" if len(sessions) % 2 == 0 else "bob")
        assert re.fullmatch(r"w[01]\.[0-9a-f]+", session.open())
        sessions.append(session)
    acknowledged: list[tuple[str, dict[str, Any], str]] = []
    # Each session's calls land on both workers; each is served by the worker that holds the session.
    for round_ in range(3):
        for n, session in enumerate(sessions):
            user = "alice" if n % 2 == 0 else "bob"
            acknowledged.append((*remember(session, f"Fact {round_}.{n} about the build {marker}"), user))
            acknowledged.append((*remember(session, f"Shared fact of every session {marker}"), user))

    # SDK clients on the handshake protocol, writing at once.
    async def sdk_writer(k: int) -> None:
        user = "alice" if k % 2 == 0 else "bob"
        async with connect(deployment, "http", "legacy", user=user, client_name=f"sdk-{k}") as client:
            for n in range(4):
                for text in (f"SDK fact {k}.{n} {marker}", f"Shared fact of every session {marker}"):
                    result = await call_ok(client, "remember", {"content": text, "kind": "fact", "scope": "personal"})
                    acknowledged.append((text, result, user))

    async with anyio.create_task_group() as tasks:
        for k in range(4):
            tasks.start_soon(sdk_writer, k)

    ids: dict[tuple[str, str], set[str]] = {}
    for text, result, user in acknowledged:
        assert result["status"] in ("created", "absorbed"), result
        ids.setdefault((user, text), set()).add(result["id"])
    assert all(len(found) == 1 for found in ids.values()), ids
    store = AsSystem(open_store(f"sqlite:///{deployment.database}"))
    try:
        with store.tx() as tx:
            live = [m for m in tx.iter_memories() if m.live and marker in m.content]
        assert Counter((m.owner, m.content) for m in live) == Counter(dict.fromkeys(ids, 1))
        assert {m.id for m in live} == {i for found in ids.values() for i in found}
        wait_for_ticks(store, 3, deadline=started + 90)
        check_each_tick_ran_once(store)
    finally:
        store.close()


def test_connections_held_open_are_spread_evenly_over_the_workers(workers: tuple[Deployment, int]) -> None:
    """Long-lived connections split evenly, whichever worker's socket the kernel gives each (it hashes their
    addresses: twelve connections over two sockets split six and six about one time in four)."""
    deployment, _ = workers

    def worker_of(client: httpx.Client) -> str:
        """The worker serving this connection: a session opens where its initialize arrives, tagged so."""
        answer = client.post(
            f"{deployment.url}/mcp",
            json=INITIALIZE,
            headers={
                "Authorization": f"Bearer {deployment.tokens['alice']}",
                "Accept": "application/json, text/event-stream",
            },
        )
        assert answer.status_code == 200, answer.text
        return answer.headers["mcp-session-id"].split(".")[0]

    clients = [httpx.Client(timeout=60) for _ in range(12)]
    try:
        owners = [worker_of(client) for client in clients]
        assert Counter(owners) == {"w0": 6, "w1": 6}
        # A connection stays with the worker it went to.
        assert [worker_of(client) for client in clients] == owners
    finally:
        for client in clients:
            client.close()


def nodelay_of_connections(pid: int) -> dict[int, int]:
    """Each TCP connection the process ``pid`` holds, by its peer's port: whether it sends small writes at once
    (TCP_NODELAY). Read through a copy of each descriptor (``pidfd_getfd``, which needs leave to trace it)."""
    libc = ctypes.CDLL(None, use_errno=True)
    found: dict[int, int] = {}
    pidfd = os.pidfd_open(pid)
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                if not os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:"):
                    continue
            copy = libc.syscall(PIDFD_GETFD, pidfd, int(fd), 0)
            if copy < 0:
                error = ctypes.get_errno()
                if error in (errno.EPERM, errno.ENOSYS):
                    pytest.skip(f"this process may not copy another's descriptors ({os.strerror(error)})")
                continue
            with socket.socket(fileno=copy) as sock:
                if sock.family == socket.AF_INET and sock.type == socket.SOCK_STREAM:
                    with contextlib.suppress(OSError):  # a listening socket has no peer
                        found[sock.getpeername()[1]] = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    finally:
        os.close(pidfd)
    return found


def test_every_connection_a_worker_serves_sends_its_answers_at_once(workers: tuple[Deployment, int]) -> None:
    """Whether a worker accepted a connection or a sibling handed it over, Nagle's algorithm is off: an answer
    written in pieces never waits for the client's delayed acknowledgement (it cost 40 ms a call, in runs)."""
    deployment, pid = workers
    clients = [httpx.Client(timeout=60) for _ in range(8)]
    try:
        for client in clients:
            answer = client.get(f"{deployment.url}/healthz")
            assert answer.status_code == 200
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        served: dict[int, int] = {}
        for child in children:
            served.update(nodelay_of_connections(int(child)))
        # The clients' eight connections (and any the server has not yet seen closed), each with Nagle's off.
        assert len(served) >= len(clients)
        assert set(served.values()) == {1}
    finally:
        for client in clients:
            client.close()


def test_a_worker_that_dies_is_started_again(workers: tuple[Deployment, int]) -> None:
    deployment, pid = workers
    first = worker_pids(pid)
    assert len(first) == 2
    os.kill(first[0], signal.SIGKILL)
    deadline = time.monotonic() + 60
    while not (len(now := worker_pids(pid)) == 2 and first[0] not in now):
        assert time.monotonic() < deadline, "the worker was not started again"
        time.sleep(0.2)
    # Every connection finds a worker that answers.
    for _ in range(6):
        session = Session(deployment, "alice")
        session.open()
        remember(session, unique("After a restart"))
    # A session id no worker issued is unknown, whichever worker it seems to name.
    for made_up in ("w1.0123abcd", "w9.0123abcd", "0123abcd"):
        session.id = made_up
        assert session.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).status_code == 404


def test_the_login_link_logs_in_once_over_any_connection(workers: tuple[Deployment, int]) -> None:
    deployment, _ = workers
    assert deployment.log is not None
    deadline = time.monotonic() + 30
    while not (found := re.findall(r"dashboard: (\S+/login/\S+)", deployment.log.read_text())):
        assert time.monotonic() < deadline, deployment.log.read_text()
        time.sleep(0.2)
    # Worker 0 holds the link it printed; one started again (another test kills a worker) prints a new one,
    # and its requests fail (404, its socket not yet open) until it listens.
    # It prints the link before it listens: the last one printed once it answers is its own.
    with httpx.Client(timeout=30) as fresh:
        while (answer := fresh.get(link := found[-1])).status_code == 404 and time.monotonic() < deadline + 30:
            time.sleep(0.2)
            found = re.findall(r"dashboard: (\S+/login/\S+)", deployment.log.read_text())
        assert answer.status_code == 303
        assert "zm_session" in fresh.cookies
    for _ in range(4):
        with httpx.Client(timeout=30) as again:
            assert again.get(link).status_code == 401
