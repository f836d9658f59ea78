"""Starting the real servers and driving them with the official SDK client."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import httpx
import httpx2
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, Implementation, ListRootsResult, Root
from pydantic import FileUrl

ZM = str(Path(sys.executable).with_name("zm"))
TRANSPORTS = ("stdio", "http")
MODES = ("auto", "legacy")
ALL_CONNECTIONS = [pytest.param((t, m), id=f"{t}-{m}") for t in TRANSPORTS for m in MODES]
SERVER_START_TIMEOUT_S = 60
# A server writes usage events and surfacings in batches (zero_memory.telemetry): what a test reads may lag.
TELEMETRY_WAIT_S = 30

T = TypeVar("T")


@dataclass
class Deployment:
    """A data directory with two users, and how to reach it."""

    home: Path
    env: dict[str, str]
    tokens: dict[str, str]
    url: str = ""
    log: Path | None = None
    # What the server printed by the time it answered /healthz (the log goes on with what later tests cause).
    startup: str = ""

    @property
    def database(self) -> Path:
        return self.home / "data" / "zm.db"


def base_env(home: Path) -> dict[str, str]:
    """Only what the server needs: nothing from the developer's own ZM_* settings leaks in.

    ``PYTHONPATH`` is passed on, so a test run from a checkout whose ``src`` it names serves that checkout's
    code rather than the one the environment has installed.
    """
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "ZM_HOME": str(home / "data"), "LANG": "C.UTF-8"}
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def zm(env: dict[str, str], *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ZM, *args], env=env, capture_output=True, text=True, timeout=120, check=check)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_health(url: str, process: subprocess.Popen[Any], log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"zm serve exited with {process.returncode}:\n{log.read_text()}")
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"zm serve did not answer /healthz within {SERVER_START_TIMEOUT_S}s:\n{log.read_text()}")


def start_server(env: dict[str, str], log: Path, *args: str) -> tuple[subprocess.Popen[bytes], str]:
    """``zm serve`` on a free loopback port, answering /healthz."""
    port = free_port()
    with log.open("wb") as out:
        process = subprocess.Popen(
            [ZM, "serve", "--port", str(port), *args], env=env, stdout=out, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(url, process, log)
    except BaseException:
        stop_server(process)
        raise
    return process, url


def stop_server(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=5)


def judge_env(base_url: str) -> dict[str, str]:
    """The settings of a judge behind a fake OpenAI-compatible server at ``base_url``."""
    return {
        "ZM_JUDGE_PROVIDER": "openai",
        "ZM_JUDGE_BASE_URL": base_url,
        "ZM_JUDGE_API_KEY": "test-key",
        "ZM_HYGIENE_MODEL": "judge-strong",
        "ZM_JUDGE_TIMEOUT_S": "10",
    }


@contextmanager
def serving(home: Path, env: dict[str, str], users: tuple[str, ...] = ("alice", "bob")) -> Iterator[Deployment]:
    """``users`` added with ``zm user add`` (their tokens kept), then ``zm serve`` running until the block ends."""
    tokens = {name: json.loads(zm(env, "user", "add", name, "--json").stdout)["token"] for name in users}
    deployment = Deployment(home=home, env=env, tokens=tokens)
    process, deployment.url = start_server(env, home / "serve.log")
    deployment.log = home / "serve.log"
    try:
        yield deployment
    finally:
        stop_server(process)


@asynccontextmanager
async def connect(
    deployment: Deployment,
    transport: str,
    mode: str,
    *,
    user: str = "alice",
    client_name: str = "pytest-mcp",
    token: str | None = None,
    cwd: Path | None = None,
    environ: dict[str, str] | None = None,
    roots: list[Path] | None = None,
) -> AsyncIterator[Client]:
    """An SDK client connected to ``zm mcp`` (a new process) or to the session's ``zm serve``.

    ``zm mcp`` starts in ``cwd``: the session's repository, as a client starts it in its workspace; by
    default the deployment's home, a directory in no repository (so its session is attached to nothing).
    """
    info = Implementation(name=client_name, version="1.0.0")
    options: dict[str, Any] = {}
    if roots is not None:

        async def list_roots(context: Any) -> ListRootsResult:
            return ListRootsResult(roots=[Root(uri=FileUrl(path.as_uri())) for path in roots])

        options["list_roots_callback"] = list_roots
    if transport == "stdio":
        env = {**deployment.env, "ZM_USER": user, **(environ or {})}
        params = StdioServerParameters(command=ZM, args=["mcp"], env=env, cwd=cwd or deployment.home)
        async with Client(params, mode=mode, client_info=info, **options) as client:  # type: ignore[arg-type]
            yield client
        return
    headers = {"Authorization": f"Bearer {token or deployment.tokens[user]}"}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=120)) as http:
        transport_ = streamable_http_client(f"{deployment.url}/mcp", http_client=http)
        async with Client(transport_, mode=mode, client_info=info, **options) as client:  # type: ignore[arg-type]
            yield client


def recorded(read: Callable[[], T], done: Callable[[T], bool]) -> T:
    """What ``read`` returns once ``done`` holds of it (or at the deadline): a server's telemetry lands in batches."""
    deadline = time.monotonic() + TELEMETRY_WAIT_S
    value = read()
    while not done(value) and time.monotonic() < deadline:
        time.sleep(0.05)
        value = read()
    return value


def unique(text: str = "") -> str:
    """A marker that keeps one test's memories apart from every other test's."""
    return f"{text} [t{uuid.uuid4().hex[:10]}]".strip()


def text_of(result: CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def call_ok(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """Call a tool that must succeed; its structured content."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    return result.structured_content


async def call_error(client: Client, tool: str, arguments: dict[str, Any]) -> str:
    """Call a tool that must be refused; its error text."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, f"{tool} succeeded: {result.structured_content}"
    assert result.structured_content is None
    return text_of(result)
