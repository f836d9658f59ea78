"""Making a client's first ``zm mcp`` start as fast as its later ones.

``zm mcp`` answers ``initialize`` and ``tools/list`` at once from answers the real server gave the last time
it ran (``mcp.catalogue``); the very first start has none, and builds the server before answering, which on a
busy machine takes longer than Codex waits. So ``zm setup`` starts ``zm mcp`` once for every protocol version
a client may ask for (the handshake versions the installed MCP SDK supports), does the handshake, asks for
the tools and leaves: each run records its answers, and the client's first session finds them.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from zero_memory.mcp import catalogue

WARM_TIMEOUT_S = 120.0


def recorded(home: Path) -> set[str]:
    """The protocol versions whose answers are on record for the installed code."""
    return set(catalogue.load(home, catalogue.fingerprint()))


def warm(zm: str, home: Path, env: dict[str, str]) -> tuple[list[str], str | None]:
    """Record the answers of every handshake version not yet on record; (the versions now on record, and why
    a start failed, if one did). Never raises: a client still works without the record, only slower at first."""
    missing = [v for v in HANDSHAKE_PROTOCOL_VERSIONS if v not in recorded(home)]
    failures: list[str] = []
    if missing:
        with ThreadPoolExecutor(max_workers=2) as pool:
            failures = [f for f in pool.map(lambda v: _handshake(zm, v, env), missing) if f]
    return sorted(recorded(home)), (failures[0] if failures else None)


def _handshake(zm: str, version: str, env: dict[str, str]) -> str | None:
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "zm-setup", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
    ]
    try:
        process = subprocess.Popen(
            [zm, "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **env},
            text=True,
        )
    except OSError as error:
        return f"zm mcp did not start: {type(error).__name__}"
    timer = threading.Timer(WARM_TIMEOUT_S, process.kill)
    timer.start()
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write("".join(json.dumps(line) + "\n" for line in lines))
        process.stdin.flush()
        # Stay until the tools are listed: closing the input first could end the server before it answered.
        for raw in process.stdout:
            if _answer_id(raw) == 2:
                break
        process.stdin.close()
        process.wait()
    except (OSError, ValueError) as error:
        process.kill()
        return f"zm mcp stopped: {type(error).__name__}"
    finally:
        timer.cancel()
    if process.returncode != 0:
        stderr = process.stderr.read() if process.stderr else ""
        return (stderr.strip().splitlines() or [f"zm mcp exited {process.returncode}"])[-1][:300]
    return None


def _answer_id(raw: str) -> object:
    try:
        message = json.loads(raw)
    except ValueError:
        return None
    return message.get("id") if isinstance(message, dict) and "method" not in message else None
