"""What ``zm mcp`` answered to ``initialize`` and ``tools/list``, kept to answer the next start at once.

Building the server takes seconds on a busy machine (the MCP SDK alone imports
for about a second of CPU; then the store, the embedding model) and Codex
waits about one second for a server before it starts without its tools. The
answers to those two requests depend only on the code and the protocol
version the client asks for, so the stdio front (``stdio_front``) serves
them from this file, recorded from the real server's answers the last time
it ran: per protocol version, under a fingerprint of the installed code (its
version, and the size and time of every module of zero_memory and of the MCP
SDK). Code that changed is a miss: that start waits for the real server and
records its answers for the next.

Light on purpose: this module is imported before anything heavy.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from importlib import util
from pathlib import Path
from typing import Any

import zero_memory

FILE = Path("cache") / "mcp-catalogue.json"
PACKAGES = ("zero_memory", "mcp", "mcp_types")


def path(home: Path) -> Path:
    return home / FILE


def fingerprint() -> str:
    """A digest of the installed code the answers come from: any module changed, added or removed changes it."""
    digest = hashlib.sha256(zero_memory.__version__.encode())
    for package in PACKAGES:
        spec = util.find_spec(package)
        for root in spec.submodule_search_locations or [] if spec is not None else []:
            for directory, names, files in sorted(os.walk(root)):
                names.sort()
                for name in sorted(f for f in files if f.endswith(".py")):
                    stat = os.stat(os.path.join(directory, name))
                    digest.update(f"{directory}/{name}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:32]


def load(home: Path, code: str) -> dict[str, Any]:
    """The recorded answers by protocol version (``{"initialize": ..., "tools": ...}``), for this code only."""
    try:
        found = json.loads(path(home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(found, dict) or found.get("fingerprint") != code:
        return {}
    versions = found.get("versions")
    return versions if isinstance(versions, dict) else {}


def save(home: Path, code: str, version: str, initialize: dict[str, Any], tools: dict[str, Any]) -> None:
    """Record one protocol version's answers beside the others of the same code; never raises. Two servers
    recording at once (two clients starting, or ``zm setup`` starting one per version) take turns, so neither
    drops the other's version."""
    file = path(home)
    try:
        file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with open(file.with_name(f".{file.name}.lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            versions = {**load(home, code), version: {"initialize": initialize, "tools": tools}}
            partial = file.with_name(f".{file.name}.{os.getpid()}")
            partial.write_text(json.dumps({"fingerprint": code, "versions": versions}), encoding="utf-8")
            os.replace(partial, file)
    except OSError:
        pass
