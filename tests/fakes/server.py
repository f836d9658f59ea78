"""A small scriptable HTTP server on 127.0.0.1, the base of the fake providers.

Each test scripts what the server answers, one ``Reply`` per request, in order
(``enqueue``), or with a function of the request (``respond_with``), and reads
back what it received (``requests``). The server runs in a thread on an
ephemeral port, so the code under test talks to it through its real HTTP
client and SDK. A request nobody scripted an answer for gets a 400 that says
so: it fails the test loudly instead of being retried.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """What the server received: method, path, headers (lower-cased names), JSON body."""

    method: str
    path: str
    headers: dict[str, str]
    raw: bytes
    body: Any = None

    @property
    def api_key(self) -> str | None:
        """The credential the client sent, as ``x-api-key`` or a bearer token."""
        if "x-api-key" in self.headers:
            return self.headers["x-api-key"]
        auth = self.headers.get("authorization", "")
        if not auth.startswith("Bearer "):
            return None
        return auth.removeprefix("Bearer ").strip() or None


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted answer.

    ``delay_s`` holds the answer back (a slow provider); ``drop`` closes the
    connection without answering (a provider that went away).
    """

    status: int = 200
    body: bytes | dict[str, Any] | list[Any] = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    drop: bool = False

    def encoded(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        return json.dumps(self.body).encode()

    @classmethod
    def json(cls, body: dict[str, Any], status: int = 200, headers: dict[str, str] | None = None) -> Reply:
        return cls(status=status, body=body, headers={"content-type": "application/json", **(headers or {})})

    def delayed(self, seconds: float) -> Reply:
        return Reply(self.status, self.body, self.headers, delay_s=seconds, drop=self.drop)


Responder = Callable[[RecordedRequest], Reply]

UNSCRIPTED = Reply.json(
    {"error": {"message": "fake server: no reply scripted for this request", "type": "unscripted"}},
    status=400,
)


class FakeHTTPServer:
    """A threaded HTTP server answering from a script; use as a context manager."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self._queue: deque[Reply] = deque()
        self._responder: Responder | None = None
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting ---------------------------------------------------------

    def enqueue(self, *replies: Reply) -> None:
        """Answer the next requests with these replies, in order."""
        with self._lock:
            self._queue.extend(replies)

    def respond_with(self, responder: Responder | None) -> None:
        """Answer every request the queue does not cover with ``responder(request)``."""
        with self._lock:
            self._responder = responder

    @property
    def last_request(self) -> RecordedRequest:
        assert self.requests, "the fake server received no request"
        return self.requests[-1]

    def _next_reply(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            if self._queue:
                return self._queue.popleft()
            responder = self._responder
        return responder(request) if responder is not None else UNSCRIPTED

    # -- lifecycle ---------------------------------------------------------

    @property
    def url(self) -> str:
        assert self._httpd is not None, "the fake server is not running"
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> Self:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes; with Nagle on, each reply
            # would wait ~40 ms for the client's delayed ACK.
            disable_nagle_algorithm = True

            def do_POST(self) -> None:
                self._answer()

            def do_GET(self) -> None:
                self._answer()

            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                request = RecordedRequest(
                    method=self.command,
                    path=self.path,
                    headers={name.lower(): value for name, value in self.headers.items()},
                    raw=raw,
                    body=body,
                )
                reply = server._next_reply(request)
                # An interruptible wait: stopping the server cuts a slow reply short.
                if reply.delay_s and server._closing.wait(reply.delay_s):
                    return
                if reply.drop:
                    self.close_connection = True
                    return
                payload = reply.encoded()
                try:
                    self.send_response(reply.status)
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    # The client gave up (its timeout) before the slow reply was sent.
                    self.close_connection = True

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: tests read ``requests`` instead of a log."""

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        httpd.daemon_threads = True
        httpd.block_on_close = False
        self._httpd = httpd
        # A short poll interval keeps ``stop`` (and so each test's teardown) quick.
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-http", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._closing.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
