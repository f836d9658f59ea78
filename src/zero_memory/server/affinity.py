"""Worker processes behind one port: each MCP session stays on the process that opened it.

``zm serve --workers N`` runs N processes that accept connections on one
port; each connection is served by one of them (the kernel picks, and a
process holding more connections than another hands new ones over:
``spread.py``). A client on the handshake protocol opens its MCP
session on one process and sends the session's ``mcp-session-id`` with
every later request, perhaps over another connection, which another process
serves. So each process tags the session ids it issues with its number (``w1.<id>``) and
passes any request for another process's session to that process over the
other's private Unix socket, streaming the answer back as it comes (an event
stream included). The one-time login link ``zm serve`` prints lives in the
memory of worker 0, which printed it: its requests go there too. A request of
the 2026-07-28 protocol has no session and is served where it lands.

A forwarded request reaches its owner with the scheme and client address the
first process saw, in a header that is believed only on the private socket.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import anyio
import httpx
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

SESSION_HEADER = b"mcp-session-id"
FORWARDED_HEADER = b"x-zm-forwarded"
LOGIN_PATH = "/login/"
LOGIN_OWNER = 0
_TAGGED = re.compile(rb"w(\d{1,4})\.(.+)")
# Headers of one hop only (RFC 9110 §7.6.1), and the length the forwarding client sets itself.
_HOP_BY_HOP = frozenset(
    {b"connection", b"keep-alive", b"proxy-connection", b"te", b"trailer", b"transfer-encoding", b"upgrade"}
)


@dataclass(frozen=True)
class Siblings:
    """This process's number among the workers, and every worker's private socket, by number."""

    index: int
    sockets: tuple[str, ...]

    def tag(self, session_id: bytes) -> bytes:
        return b"w%d.%s" % (self.index, session_id)


@dataclass
class Affinity:
    """ASGI middleware: serve what belongs here, hand the rest to the worker it belongs to."""

    app: ASGIApp
    siblings: Siblings
    _clients: dict[int, httpx.AsyncClient] = field(default_factory=dict)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        owner, session = self.owner(scope)
        if owner is not None and owner != self.siblings.index:
            await self.forward(owner, scope, receive, send)
            return
        await self.app(self.local_scope(scope, session), receive, self.tagging(send))

    def owner(self, scope: Scope) -> tuple[int | None, bytes | None]:
        """The worker that must serve this request (None: any), and its session id as the SDK issued it."""
        if scope["path"].startswith(LOGIN_PATH):
            return LOGIN_OWNER, None
        value = next((v for name, v in scope["headers"] if name == SESSION_HEADER), None)
        tagged = _TAGGED.fullmatch(value) if value is not None else None
        if tagged is None or int(tagged[1]) >= len(self.siblings.sockets):
            # No session, or an id no worker issued: the SDK answers it as it answers any unknown id.
            return None, None
        return int(tagged[1]), tagged[2]

    def local_scope(self, scope: Scope, session: bytes | None) -> Scope:
        forwarded = scope.get("server") == (self.siblings.sockets[self.siblings.index], None)
        headers = []
        for name, value in scope["headers"]:
            if name == FORWARDED_HEADER:
                if forwarded:
                    scheme, _, client = value.decode("latin-1").partition(" ")
                    host, _, port = client.rpartition(":")
                    scope = {**scope, "scheme": scheme, "client": (host, int(port)) if port.isdigit() else None}
                continue
            headers.append((name, session) if name == SESSION_HEADER and session is not None else (name, value))
        return {**scope, "headers": headers}

    def tagging(self, send: Send) -> Send:
        """``send``, with the session id of a response tagged with this worker's number."""

        async def tagged(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {
                    **message,
                    "headers": [
                        (name, self.siblings.tag(value) if name.lower() == SESSION_HEADER else value)
                        for name, value in message.get("headers", [])
                    ],
                }
            await send(message)

        return tagged

    async def forward(self, owner: int, scope: Scope, receive: Receive, send: Send) -> None:
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if len(body) > DEFAULT_MAX_REQUEST_BODY_SIZE:
                # Read before anyone checked the token: no more than the MCP endpoint itself accepts.
                await Response("request body too large", status_code=413)(scope, receive, send)
                return
            if not message.get("more_body", False):
                break
        client = scope.get("client")
        origin = f"{scope.get('scheme', 'http')} {client[0]}:{client[1]}" if client else scope.get("scheme", "http")
        headers = [
            (name, value)
            for name, value in scope["headers"]
            if name not in _HOP_BY_HOP and name not in (b"content-length", FORWARDED_HEADER)
        ]
        headers.append((FORWARDED_HEADER, origin.encode("latin-1")))
        http = self._client(owner)
        path = scope.get("raw_path") or scope["path"].encode()
        query = scope.get("query_string", b"")
        url = httpx.URL("http://worker").copy_with(raw_path=path + (b"?" + query if query else b""))
        request = http.build_request(scope["method"], url, headers=headers, content=bytes(body))
        try:
            response = await http.send(request, stream=True)
        except httpx.TransportError:
            # Its process is gone, and the sessions it held with it: the client opens a new one.
            await JSONResponse(
                {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Session not found"}}, 404
            )(scope, receive, send)
            return
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": response.status_code,
                    "headers": [(k.lower(), v) for k, v in response.headers.raw if k.lower() not in _HOP_BY_HOP],
                }
            )
            await _relay(response.aiter_raw(), receive, send)
        finally:
            await response.aclose()

    def _client(self, owner: int) -> httpx.AsyncClient:
        client = self._clients.get(owner)
        if client is None:
            # No timeout: an event stream stays open as long as the client keeps it.
            transport = httpx.AsyncHTTPTransport(uds=self.siblings.sockets[owner])
            client = self._clients[owner] = httpx.AsyncClient(transport=transport, timeout=None)
        return client


async def _relay(chunks: AsyncIterator[bytes], receive: Receive, send: Send) -> None:
    """The answer's body as it comes, until it ends or the client goes away."""
    async with anyio.create_task_group() as tasks:

        async def until_disconnect() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            tasks.cancel_scope.cancel()

        tasks.start_soon(until_disconnect)
        async for chunk in chunks:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        tasks.cancel_scope.cancel()
