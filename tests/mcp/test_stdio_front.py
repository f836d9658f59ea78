"""The stdio front's routing, message by message: what it answers from the catalogue, what waits for the
server and in which order it reaches it, and what it records (the whole path: test_stdio_start.py)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from typing import Any

from zero_memory.mcp.stdio_front import LISTED, REPLAYED, Front

VERSION = "2025-06-18"
HELLO = {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "codex", "version": "0.17"}}
INITIALIZE = {"protocolVersion": VERSION, "capabilities": {"tools": {}}, "serverInfo": {"name": "zero-memory"}}
TOOLS = {"tools": [{"name": "recall", "inputSchema": {"type": "object"}}]}


class Server:
    """Stands in for the backend: keeps the lines the front sends it."""

    def __init__(self) -> None:
        self.lines: list[bytes] = []

    def send(self, line: bytes) -> None:
        self.lines.append(line)

    @property
    def received(self) -> list[dict[str, Any]]:
        return [json.loads(text) for text in self.lines]


def line(**message: Any) -> bytes:
    return (json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode()


def written(wire: io.BytesIO) -> list[dict[str, Any]]:
    return [json.loads(text) for text in wire.getvalue().splitlines()]


def front(known: dict[str, Any]) -> tuple[Front, io.BytesIO, list[tuple[str, Any, Any]]]:
    wire = io.BytesIO()
    records: list[tuple[str, Any, Any]] = []
    return Front(wire, known, lambda v, i, t: records.append((v, i, t))), wire, records


def test_the_handshake_and_the_tools_are_answered_at_once_and_the_rest_waits_in_order() -> None:
    f, wire, records = front({VERSION: {"initialize": INITIALIZE, "tools": TOOLS}})
    f.receive(line(id=0, method="initialize", params=HELLO))
    f.receive(line(method="notifications/initialized"))
    f.receive(line(id=1, method="tools/list", params={}))
    f.receive(line(id=2, method="ping"))
    f.receive(line(id=3, method="tools/call", params={"name": "recall", "arguments": {"query": "x"}}))
    f.receive(line(id=4, method="tools/list", params={"cursor": "next"}))
    assert written(wire) == [
        {"jsonrpc": "2.0", "id": 0, "result": INITIALIZE},
        {"jsonrpc": "2.0", "id": 1, "result": TOOLS},
        {"jsonrpc": "2.0", "id": 2, "result": {}},
    ]

    server = Server()
    f.attach(server)  # type: ignore[arg-type]
    assert [(m.get("id"), m.get("method")) for m in server.received] == [
        (REPLAYED, "initialize"),
        (None, "notifications/initialized"),
        (LISTED, "tools/list"),
        (3, "tools/call"),
        (4, "tools/list"),
    ]
    assert server.received[0]["params"] == HELLO
    f.receive(line(id=5, method="tools/list", params={}))
    assert server.received[-1]["id"] == 5  # once the server is there, it answers everything

    # The server's answers to the replay are not the client's; the others are passed on as they are.
    f.from_server(line(id=REPLAYED, result=INITIALIZE))
    f.from_server(line(id=LISTED, result=TOOLS))
    f.from_server(line(id=3, result={"content": []}))
    assert [m["id"] for m in written(wire)] == [0, 1, 2, 3]
    assert records == []  # the same answers as the catalogue's: nothing to record


def test_a_miss_leaves_the_handshake_to_the_server_and_records_its_answers() -> None:
    f, wire, records = front({"2025-03-26": {"initialize": INITIALIZE, "tools": TOOLS}})
    f.receive(line(id=0, method="initialize", params=HELLO))
    f.receive(line(method="notifications/initialized"))
    f.receive(line(id=1, method="tools/list", params={}))
    assert written(wire) == []

    server = Server()
    f.attach(server)  # type: ignore[arg-type]
    assert [m.get("id") for m in server.received] == [0, None, 1]
    changed = {"tools": [*TOOLS["tools"], {"name": "remember", "inputSchema": {"type": "object"}}]}
    f.from_server(line(id=0, result=INITIALIZE))
    f.from_server(line(id=1, result=changed))
    assert [m["id"] for m in written(wire)] == [0, 1]
    assert records == [(VERSION, INITIALIZE, changed)]


def test_a_request_the_catalogue_cannot_answer_before_a_handshake_waits_for_the_server() -> None:
    """The 2026 protocol has no handshake: its requests all wait for the server."""
    f, wire, _ = front({VERSION: {"initialize": INITIALIZE, "tools": TOOLS}})
    f.receive(line(id=7, method="server/discover", params={}))
    f.receive(line(id=8, method="tools/list", params={}))
    f.receive(b"not json\n")
    server = Server()
    f.attach(server)  # type: ignore[arg-type]
    assert written(wire) == []
    assert server.lines == [
        line(id=7, method="server/discover", params={}),
        line(id=8, method="tools/list", params={}),
        b"not json\n",
    ]


def test_the_front_imports_nothing_but_the_standard_library_and_its_own_light_modules() -> None:
    """What ``zm mcp`` imports before it can answer: a heavy import added here (the SDK, numpy, pydantic, the
    store) would put the handshake behind it again (benchmarks/mcp_start.py measures the time)."""
    probe = (
        "import sys, zero_memory.cli.entry, zero_memory.mcp.stdio_front\n"
        "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] not in sys.stdlib_module_names)))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    loaded = set(done.stdout.split()) - {"__main__", "_distutils_hack"}
    assert loaded == {
        "zero_memory",
        "zero_memory.cli",
        "zero_memory.cli.entry",
        "zero_memory.errors",
        "zero_memory.mcp",
        "zero_memory.mcp.catalogue",
        "zero_memory.mcp.stdio_front",
        "zero_memory.settings",
    }
