"""``zm mcp``, light enough to answer a client's handshake at once: the front (``mcp/stdio_front.py``)
answers it while the server (``server/stdio.py``) is built behind it, its imports included, on the front's
loading thread."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from zero_memory.mcp.stdio_front import Backend


def serve_stdio() -> int:
    """Serve MCP over stdio until the client closes stdin; the exit status."""
    from zero_memory.mcp.stdio_front import main as front

    return front(build_backend)


def build_backend() -> Backend:
    from zero_memory.server.stdio import Backend

    return Backend.build()
