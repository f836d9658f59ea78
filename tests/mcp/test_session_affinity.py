"""Session affinity between workers: a request for another worker's session is served by that worker.

Worker 1 is a real uvicorn on its private Unix socket; worker 0's middleware is called in process. The app
behind both answers with what it saw, so the tests read what crossed over and what came back.
"""

from __future__ import annotations

import json
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from starlette.types import Receive, Scope, Send

from zero_memory.server.affinity import Affinity, Siblings


def echo(worker: int) -> object:
    """An app that answers with what it saw, in three chunks, and issues session id ``s<worker>``."""

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = dict(scope["headers"])
        seen = {
            "worker": worker,
            "path": scope["path"],
            "query": scope["query_string"].decode(),
            "session": headers.get(b"mcp-session-id", b"").decode() or None,
            "forwarded_header": b"x-zm-forwarded" in headers,
            "host": headers.get(b"host", b"").decode(),
            "scheme": scope["scheme"],
            "client": list(scope["client"]) if scope.get("client") else None,
            "body": body.decode(),
        }
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"mcp-session-id", f"s{worker}".encode())],
            }
        )
        text = json.dumps(seen).encode()
        for part in (text[:5], text[5:10], text[10:]):
            await send({"type": "http.response.body", "body": part, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    return app


@pytest.fixture
def siblings() -> Iterator[Siblings]:
    """Worker 1 serving on its socket; the siblings as worker 0 knows them."""
    folder = Path(tempfile.mkdtemp(prefix="zm-aff-"))
    paths = (str(folder / "w0.sock"), str(folder / "w1.sock"))
    server = uvicorn.Server(
        uvicorn.Config(Affinity(echo(1), Siblings(1, paths)), uds=paths[1], log_level="warning", lifespan="off")  # type: ignore[arg-type]
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "worker 1 did not start"
        time.sleep(0.05)
    yield Siblings(0, paths)
    server.should_exit = True
    thread.join(timeout=10)


def worker_zero(siblings: Siblings) -> httpx.AsyncClient:
    app = Affinity(echo(0), siblings)  # type: ignore[arg-type]
    transport = httpx.ASGITransport(app=app, client=("203.0.113.7", 51000))
    return httpx.AsyncClient(transport=transport, base_url="https://zm.example.com")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_a_request_for_another_workers_session_is_served_there_as_the_first_worker_saw_it(
    siblings: Siblings,
) -> None:
    async with worker_zero(siblings) as client:
        answer = await client.post(
            "/mcp?x=1", content=b'{"call": 1}', headers={"mcp-session-id": "w1.abc", "x-zm-forwarded": "http 6.6.6.6:1"}
        )
    assert answer.status_code == 200
    seen = answer.json()
    assert seen["worker"] == 1 and seen["session"] == "abc" and seen["body"] == '{"call": 1}'
    assert seen["path"] == "/mcp" and seen["query"] == "x=1" and seen["host"] == "zm.example.com"
    # The scheme and client the first worker saw, not the forged header's, nor the Unix socket's.
    assert seen["scheme"] == "https" and seen["client"] == ["203.0.113.7", 51000]
    assert not seen["forwarded_header"]
    # The session id the owner issues comes back tagged with the owner's number.
    assert answer.headers["mcp-session-id"] == "w1.s1"


@pytest.mark.anyio
async def test_a_workers_own_sessions_and_sessionless_requests_stay_with_it(siblings: Siblings) -> None:
    async with worker_zero(siblings) as client:
        own = await client.post("/mcp", headers={"mcp-session-id": "w0.def", "x-zm-forwarded": "http 6.6.6.6:1"})
        fresh = await client.post("/mcp")
        unknown = await client.post("/mcp", headers={"mcp-session-id": "w5.ghi"})
    assert own.json()["worker"] == 0 and own.json()["session"] == "def" and not own.json()["forwarded_header"]
    assert fresh.json()["worker"] == 0 and fresh.json()["session"] is None
    assert fresh.headers["mcp-session-id"] == "w0.s0"
    # An id no worker issued reaches the SDK as it came, which answers it as unknown.
    assert unknown.json()["worker"] == 0 and unknown.json()["session"] == "w5.ghi"


@pytest.mark.anyio
async def test_the_login_link_goes_to_worker_zero(siblings: Siblings) -> None:
    one = Siblings(1, siblings.sockets)
    zero = uvicorn.Server(
        uvicorn.Config(Affinity(echo(0), siblings), uds=siblings.sockets[0], log_level="warning", lifespan="off")  # type: ignore[arg-type]
    )
    thread = threading.Thread(target=zero.run, daemon=True)
    thread.start()
    try:
        while not zero.started:
            time.sleep(0.05)
        transport = httpx.ASGITransport(app=Affinity(echo(1), one))  # type: ignore[arg-type]
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8787") as client:
            answer = await client.get("/login/some-code")
        assert answer.json()["worker"] == 0 and answer.json()["path"] == "/login/some-code"
    finally:
        zero.should_exit = True
        thread.join(timeout=10)


@pytest.mark.anyio
async def test_a_session_of_a_worker_that_is_gone_is_not_found() -> None:
    folder = Path(tempfile.mkdtemp(prefix="zm-aff-"))
    gone = Siblings(0, (str(folder / "w0.sock"), str(folder / "w1.sock")))
    async with worker_zero(gone) as client:
        answer = await client.post("/mcp", headers={"mcp-session-id": "w1.abc"})
    assert answer.status_code == 404 and answer.json()["error"]["message"] == "Session not found"


@pytest.mark.anyio
async def test_a_body_larger_than_mcp_accepts_is_refused_before_it_is_handed_over(siblings: Siblings) -> None:
    async with worker_zero(siblings) as client:
        answer = await client.post("/mcp", content=b"x" * (5 * 1024 * 1024), headers={"mcp-session-id": "w1.abc"})
    assert answer.status_code == 413
