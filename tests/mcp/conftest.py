"""Real servers for the MCP tests, and the official SDK client to drive them.

One data directory per test session holds two users, alice and bob, created
with ``zm user add NAME --json`` like an operator would. ``http_server`` is one
``zm serve`` subprocess on a free loopback port; ``pool`` hands out connected
clients, one long-lived connection per (user, transport, protocol mode), so a
stdio server process starts once per combination, not once per test. Tests
that need a connection of their own (a fresh transport session, their own
client name) open one with ``connect``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field

import anyio
import pytest
from anyio.abc import TaskGroup, TaskStatus
from mcp.client.client import Client

from tests.mcp.helpers import ALL_CONNECTIONS, Deployment, base_env, connect, start_server, stop_server, zm
from tests.mcp.oauth_flow import oauth_access_token
from zero_memory.store import Store, open_store


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Deployment:
    home = tmp_path_factory.mktemp("zm")
    env = base_env(home)
    tokens = {name: json.loads(zm(env, "user", "add", name, "--json").stdout)["token"] for name in ("alice", "bob")}
    return Deployment(home=home, env=env, tokens=tokens)


@pytest.fixture(scope="session")
def http_server(deployment: Deployment) -> Iterator[Deployment]:
    """One ``zm serve`` for the whole session; tests use unique content, so they do not interfere."""
    log = deployment.home / "serve.log"
    process, url = start_server(deployment.env, log)
    deployment.url, deployment.log, deployment.startup = url, log, log.read_text()
    yield deployment
    stop_server(process)


@pytest.fixture(scope="session")
def store(deployment: Deployment) -> Iterator[Store]:
    """The servers' own database, opened by the test to check what they recorded."""
    opened = open_store(f"sqlite:///{deployment.database}")
    yield opened
    opened.close()


@dataclass
class ClientPool:
    """Long-lived connections, each held open by its own task until the session ends."""

    deployment: Deployment
    tasks: TaskGroup
    closing: anyio.Event = field(default_factory=anyio.Event)
    clients: dict[tuple[str, str, str], Client] = field(default_factory=dict)

    async def get(self, user: str, transport: str, mode: str) -> Client:
        key = (user, transport, mode)
        if key not in self.clients:
            self.clients[key] = await self.tasks.start(self._hold, key)
        return self.clients[key]

    async def _hold(self, key: tuple[str, str, str], *, task_status: TaskStatus[Client]) -> None:
        user, transport, mode = key
        token = None
        if transport == "oauth":
            # HTTP with an access token the user got through the OAuth flow instead of a bearer token.
            token = await anyio.to_thread.run_sync(oauth_access_token, self.deployment, user)
        async with connect(
            self.deployment,
            "http" if transport == "oauth" else transport,
            mode,
            user=user,
            client_name=f"pytest-{transport}-{mode}",
            token=token,
        ) as client:
            task_status.started(client)
            await self.closing.wait()


@pytest.fixture(scope="session")
async def pool(http_server: Deployment) -> AsyncIterator[ClientPool]:
    async with anyio.create_task_group() as tasks:
        clients = ClientPool(http_server, tasks)
        yield clients
        clients.closing.set()


@pytest.fixture(params=ALL_CONNECTIONS)
def via(request: pytest.FixtureRequest) -> tuple[str, str]:
    """(transport, protocol mode): every test that takes it runs over stdio and HTTP, auto and legacy."""
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
async def client(pool: ClientPool, via: tuple[str, str]) -> Client:
    """alice's connection over ``via``."""
    return await pool.get("alice", *via)


@pytest.fixture
async def bob(pool: ClientPool, via: tuple[str, str]) -> Client:
    """bob's connection over the same transport and mode as ``client``."""
    return await pool.get("bob", *via)
