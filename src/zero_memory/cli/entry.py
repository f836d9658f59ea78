"""The ``zm`` console script. ``zm mcp`` starts without the rest of the command line: a client waits for its
handshake (``zero_memory.mcp.stdio_front``), and importing every command costs most of a second."""

from __future__ import annotations

import sys


def main() -> None:
    if sys.argv[1:] == ["mcp"]:
        from zero_memory.cli.stdio import serve_stdio

        sys.exit(serve_stdio())
    from zero_memory.cli.main import main as command_line

    command_line()
