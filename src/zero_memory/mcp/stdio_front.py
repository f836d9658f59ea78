"""``zm mcp``: answer ``initialize`` and ``tools/list`` at once, build the real server in the background.

A client starts ``zm mcp`` and waits for its handshake; Codex waits about one
second before it starts a session without the server's tools. Building the
server (the MCP SDK, the store, the embedding model) takes longer than that
on a busy machine, so this front, which imports nothing heavy, reads the
client's messages from the first moment:

- ``initialize`` and then ``tools/list`` (and ``ping``) are answered from the
  catalogue: what the real server answered to the same protocol version last
  time, for the same code (``catalogue``). A miss leaves them to the server.
- Everything else waits, in order, until the server is built; then the
  client's ``initialize`` and ``notifications/initialized`` are replayed to it
  (their answer is the front's already, so the server's is not passed on)
  and every message goes straight through, both ways.

The server's answers to ``initialize`` and ``tools/list`` are recorded into the
catalogue whenever they differ from it, so a change of code costs one slow
start. A server that cannot be built (an unknown ``ZM_USER``, a database that
is down) ends the process with its one-line error on stderr and exit 1.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, Protocol

from zero_memory import errors
from zero_memory.mcp import catalogue
from zero_memory.settings import Settings

REPLAYED = "zm-front-initialize"
LISTED = "zm-front-tools"


class Backend(Protocol):
    """The real server behind the front (``server/stdio.py``): a client's lines in, the server's lines out."""

    def start(self) -> None: ...

    def send(self, line: bytes) -> None: ...

    def lines(self) -> Iterator[bytes]: ...

    def close(self) -> None: ...


class Front:
    """The client's side of one ``zm mcp`` process: its messages in, every answer out, one line each."""

    def __init__(
        self, wire: IO[bytes], known: dict[str, Any], record: Callable[[str, dict[str, Any], dict[str, Any]], None]
    ):
        self._wire = wire
        self._known = known
        self._record = record
        self._lock = threading.Lock()
        self._writing = threading.Lock()
        self._backend: Backend | None = None
        self._waiting: list[bytes] = []
        self._hello: dict[str, Any] | None = None
        self._initialized = False
        self._version: str | None = None
        self._asked: dict[Any, str] = {}
        self._answers: dict[str, dict[str, Any]] = {}

    def receive(self, line: bytes) -> None:
        """One line from the client."""
        with self._lock:
            if self._backend is not None:
                self._note(line)
                self._backend.send(line)
            elif not self._answered(line):
                self._note(line)
                self._waiting.append(line)

    def attach(self, backend: Backend) -> None:
        """The server is built: replay the handshake the front answered, then everything that waited."""
        with self._lock:
            if self._hello is not None:
                backend.send(_line({**self._hello, "id": REPLAYED}))
                if self._initialized:
                    backend.send(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                    backend.send(_line({"jsonrpc": "2.0", "id": LISTED, "method": "tools/list", "params": {}}))
            for line in self._waiting:
                backend.send(line)
            self._waiting.clear()
            self._backend = backend

    def from_server(self, line: bytes) -> None:
        """One line from the server: passed on, unless it answers the front's own replay."""
        message = _parse(line)
        if message is not None and "method" not in message:
            ident = message.get("id")
            if ident in (REPLAYED, LISTED):
                self._keep("initialize" if ident == REPLAYED else "tools", message)
                return
            if ident in self._asked:
                self._keep(self._asked.pop(ident), message)
        self._write(line)

    def _answered(self, line: bytes) -> bool:
        """Answer what the catalogue holds; False for what must wait for the server."""
        message = _parse(line)
        if message is None:
            return False
        method, ident, params = message.get("method"), message.get("id"), message.get("params") or {}
        if method == "initialize" and self._hello is None and ident is not None:
            version = params.get("protocolVersion") if isinstance(params, dict) else None
            known = self._known.get(version) if isinstance(version, str) else None
            if known is None:
                return False
            self._hello, self._version = message, version
            self._reply(ident, known["initialize"])
            return True
        if self._hello is None or self._version is None:
            return False
        if method == "notifications/initialized":
            self._initialized = True
            return True
        if method == "tools/list" and ident is not None and not (isinstance(params, dict) and params.get("cursor")):
            self._reply(ident, self._known[self._version]["tools"])
            return True
        if method == "ping" and ident is not None:
            self._reply(ident, {})
            return True
        return False

    def _note(self, line: bytes) -> None:
        """Watch the client's own ``initialize`` and first ``tools/list`` on a miss: their answers are recorded."""
        message = _parse(line)
        if message is None or message.get("id") is None:
            return
        given = message.get("params")
        params: dict[str, Any] = given if isinstance(given, dict) else {}
        if message.get("method") == "initialize" and isinstance(params.get("protocolVersion"), str):
            self._version = params["protocolVersion"]
            self._asked[message["id"]] = "initialize"
        elif message.get("method") == "tools/list" and not params.get("cursor") and "tools" not in self._answers:
            self._asked[message["id"]] = "tools"

    def _keep(self, kind: str, message: dict[str, Any]) -> None:
        result = message.get("result")
        if not isinstance(result, dict):
            return
        self._answers[kind] = result
        version = self._version
        if version is None or set(self._answers) != {"initialize", "tools"}:
            return
        if self._known.get(version) != self._answers:
            self._record(version, self._answers["initialize"], self._answers["tools"])
            self._known[version] = dict(self._answers)

    def _reply(self, ident: Any, result: dict[str, Any]) -> None:
        self._write(_line({"jsonrpc": "2.0", "id": ident, "result": result}))

    def _write(self, line: bytes) -> None:
        with self._writing:
            self._wire.write(line)
            self._wire.flush()


def main(build: Callable[[], Backend]) -> int:
    """``zm mcp``: serve until the client closes stdin; the exit status. ``build`` makes the server (its
    imports included: it is called on a thread of its own, once the front is answering)."""
    wire_in, wire_out = _claim_stdio()
    try:
        home = Path(Settings.from_environ().home)
    except errors.ZMError as error:
        return _refused(error)
    code = catalogue.fingerprint()
    front = Front(wire_out, catalogue.load(home, code), lambda v, i, t: catalogue.save(home, code, v, i, t))
    built: list[tuple[Backend, threading.Thread]] = []
    loader = threading.Thread(target=_load, args=(front, build, built), name="zm-mcp-load", daemon=True)
    loader.start()
    for line in wire_in:
        front.receive(line)
    loader.join()  # input ended before the server was built: its answers to what waited still go out
    backend, pump = built[0]
    backend.close()
    pump.join()
    return 0


def _load(front: Front, build: Callable[[], Backend], built: list[tuple[Backend, threading.Thread]]) -> None:
    """Build the server (imports included) and attach it; a failure ends the process, said in one line."""
    try:
        backend = build()
    except errors.ZMError as error:
        os._exit(_refused(error))
    except BaseException:
        traceback.print_exc()
        os._exit(1)
    backend.start()
    pump = threading.Thread(target=_pump, args=(front, backend), name="zm-mcp-out", daemon=True)
    pump.start()
    built.append((backend, pump))
    front.attach(backend)


def _pump(front: Front, backend: Backend) -> None:
    for line in backend.lines():
        front.from_server(line)


def _claim_stdio() -> tuple[IO[bytes], IO[bytes]]:
    """The protocol's stdin and stdout, for the front alone: fd 0 becomes the null device and fd 1 stderr,
    so that nothing else in the process (a library's print, a child) reads or writes the wire."""
    wire_in = os.fdopen(os.dup(0), "rb")
    wire_out = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return wire_in, wire_out


def _refused(error: errors.ZMError) -> int:
    sys.stderr.write(str(error).splitlines()[0] + "\n")
    sys.stderr.flush()
    return 1


def _parse(line: bytes) -> dict[str, Any] | None:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def _line(message: dict[str, Any]) -> bytes:
    return (json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")
