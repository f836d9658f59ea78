"""The tool layer in process: declaring tools, strict arguments, error translation, identity, the HTTP edge."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp.client.client import Client
from pydantic import BaseModel, Field

from tests.mcp.helpers import text_of
from zero_memory import errors
from zero_memory.access import users
from zero_memory.app import App
from zero_memory.bootstrap import build_app
from zero_memory.embedding.hashing import HashingEmbedder
from zero_memory.mcp.http import bearer_token, transport_security
from zero_memory.mcp.identity import Identity
from zero_memory.mcp.server import ZMServer, build_server, tool_modules
from zero_memory.mcp.tooling import ToolArgs, ToolCall, Toolset, safe_text
from zero_memory.settings import Settings
from zero_memory.store import system_tx

pytestmark = pytest.mark.anyio
GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def app(tmp_path: Path) -> Iterator[App]:
    built = build_app(Settings.from_environ({"ZM_HOME": str(tmp_path)}), embedder=HashingEmbedder())
    with system_tx(built.store, "test", write=True) as tx:
        users.add_user(tx, "alice", is_local=True)
    yield built
    built.close()


class EchoArgs(ToolArgs):
    text: str = Field(description="Anything.")
    delay: float = 0.0


class Echo(BaseModel):
    text: str
    thread: str


def with_test_tools(app: App) -> tuple[ZMServer, Toolset]:
    """A server with the real tools plus a few test tools."""
    toolset = Toolset()

    @toolset.tool(title="Echo", read_only=True, idempotent=True, mirror=lambda r: f"echo: {r.text}")
    def echo(call: ToolCall, args: EchoArgs) -> Echo:
        """Say it back."""
        time.sleep(args.delay)
        return Echo(text=f"{call.caller.uid}/{call.caller.client}/{args.text}", thread=threading.current_thread().name)

    @toolset.tool(title="Crash")
    def crash(call: ToolCall, args: EchoArgs) -> Echo:
        """Fail the way a bug does."""
        raise RuntimeError(f"database password is hunter2 ({args.text})")

    @toolset.tool(title="Refuse")
    def refuse(call: ToolCall, args: EchoArgs) -> Echo:
        """Refuse the way a service does."""
        raise errors.conflict("already done", subcode=errors.ALREADY_RESOLVED)

    server = build_server(app, Identity(local_uid="alice", stdio_session="stdio-test"))
    for spec in toolset.specs:
        server.add_spec(spec)
    return server, toolset


async def test_a_tool_result_has_structured_content_and_its_text_mirror(app: App) -> None:
    server, _ = with_test_tools(app)
    async with Client(server) as client:
        result = await client.call_tool("echo", {"text": "hi"})
    assert result.structured_content == {"text": "alice/mcp/hi", "thread": result.structured_content["thread"]}  # type: ignore[index]
    assert text_of(result) == "echo: alice/mcp/hi"


async def test_a_sync_tool_runs_off_the_event_loop(app: App) -> None:
    server, _ = with_test_tools(app)
    finished: list[str] = []
    async with Client(server) as client:

        async def call(name: str, delay: float) -> None:
            await client.call_tool("echo", {"text": name, "delay": delay})
            finished.append(name)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(call, "slow", 1.0)
            await anyio.sleep(0.1)
            tasks.start_soon(call, "fast", 0.0)
    assert finished == ["fast", "slow"]


async def test_a_crash_is_internal_and_tells_nothing(app: App) -> None:
    server, _ = with_test_tools(app)
    async with Client(server) as client:
        result = await client.call_tool("crash", {"text": "x"})
    assert result.is_error
    assert text_of(result).startswith("internal: ")
    assert "hunter2" not in text_of(result) and "RuntimeError" not in text_of(result)
    with system_tx(app.store, "test") as tx:
        assert [(e["tool"], e["outcome"]) for e in tx.usage_events(tool="crash")] == [("crash", "internal")]


async def test_a_service_refusal_keeps_both_prefixes(app: App) -> None:
    server, _ = with_test_tools(app)
    async with Client(server) as client:
        result = await client.call_tool("refuse", {"text": "x"})
    assert text_of(result) == "conflict: already_resolved: already done"


async def test_an_argument_name_that_looks_like_a_credential_is_not_echoed(app: App) -> None:
    server, _ = with_test_tools(app)
    async with Client(server) as client:
        result = await client.call_tool("echo", {"text": "x", GITHUB_TOKEN: 1, "a b": 2})
    assert text_of(result) == "validation_failed: <unnamed>: unknown argument; <unnamed>: unknown argument"


async def test_an_http_server_refuses_a_call_without_an_authenticated_user(app: App) -> None:
    server = build_server(app, Identity())
    async with Client(server) as client:
        result = await client.call_tool("recall", {"query": "x"})
    assert result.is_error and text_of(result).startswith("unavailable:")


async def test_the_caller_is_the_transports_user_whatever_the_arguments_say(app: App) -> None:
    server, _ = with_test_tools(app)
    async with Client(server) as client:
        result = await client.call_tool(
            "remember",
            {
                "content": "Mine",
                "kind": "fact",
                "scope": "personal",
                "source": {"client": "impostor", "client_session_id": "theirs"},
            },
        )
    assert result.structured_content is not None and result.structured_content["scope"] == "user.alice"


def test_every_tools_module_is_served(app: App) -> None:
    assert "zero_memory.mcp.tools_memory" in [module.__name__ for module in tool_modules()]
    server = build_server(app)
    assert {
        "remember",
        "recall",
        "get_memory",
        "forget",
        "restore_memory",
        "close_loop",
        "move_memories",
        "link",
    } <= set(server.specs)


def test_a_tool_name_is_served_once(app: App) -> None:
    server, toolset = with_test_tools(app)
    with pytest.raises(ValueError, match="echo"):
        server.add_spec(toolset.specs[0])


def test_a_tool_must_declare_its_argument_and_result_models() -> None:
    toolset = Toolset()
    with pytest.raises(TypeError, match="ToolArgs"):

        @toolset.tool(title="Bad")
        def bad(call: ToolCall, args: dict) -> Echo:  # type: ignore[type-arg]
            raise AssertionError

    with pytest.raises(TypeError, match="pydantic model"):

        @toolset.tool(title="Bad")
        def worse(call: ToolCall, args: EchoArgs) -> dict:  # type: ignore[type-arg]
            raise AssertionError


def test_an_error_that_would_quote_a_credential_is_reworded() -> None:
    text = safe_text(errors.not_found(f"memory {GITHUB_TOKEN}"))
    assert text.startswith("not_found: ") and GITHUB_TOKEN[4:] not in text


@pytest.mark.parametrize(
    ("header", "token"),
    [
        (b"Bearer abc", "abc"),
        (b"bearer abc", "abc"),
        (b"Bearer   abc", "abc"),
        (b"Bearer", None),
        (b"Bearer a b", None),
        (b"Basic abc", None),
        (b"Bearer " + b"x" * 600, None),
    ],
)
def test_bearer_token_parsing(header: bytes, token: str | None) -> None:
    assert bearer_token({"type": "http", "headers": [(b"authorization", header)]}) == token


def test_loopback_is_always_allowed_and_allowed_hosts_add_names() -> None:
    default = transport_security("127.0.0.1")
    assert default.enable_dns_rebinding_protection
    assert {"127.0.0.1:*", "localhost:*", "[::1]:*", "localhost", "127.0.0.1"} <= set(default.allowed_hosts)
    proxied = transport_security("127.0.0.1", ["zm.example.com", "other.example:8443"])
    assert {"zm.example.com", "zm.example.com:*", "other.example:8443"} <= set(proxied.allowed_hosts)
    assert "https://zm.example.com" in proxied.allowed_origins
    assert "other.example:*" not in proxied.allowed_hosts


def test_a_specific_bind_address_is_allowed_and_a_wildcard_bind_checks_nothing_unless_told() -> None:
    assert "192.168.1.5:*" in transport_security("192.168.1.5").allowed_hosts
    assert not transport_security("0.0.0.0").enable_dns_rebinding_protection
    assert transport_security("0.0.0.0", ["zm.example.com"]).enable_dns_rebinding_protection
    assert not transport_security("127.0.0.1", ["*"]).enable_dns_rebinding_protection


def test_the_client_name_falls_back_to_the_user_agent_then_unknown() -> None:
    from types import SimpleNamespace

    from zero_memory.mcp.identity import client_name

    anonymous = SimpleNamespace(session=SimpleNamespace(client_params=None))
    named = SimpleNamespace(
        session=SimpleNamespace(client_params=SimpleNamespace(client_info=SimpleNamespace(name="claude-code\n")))
    )
    assert client_name(anonymous, "curl/8.5.0") == "curl/8.5.0"  # type: ignore[arg-type]
    assert client_name(anonymous, None) == "unknown"  # type: ignore[arg-type]
    assert client_name(named, "curl/8.5.0") == "claude-code"  # type: ignore[arg-type]
