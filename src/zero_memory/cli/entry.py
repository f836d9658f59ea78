"""The ``zm`` console script. ``zm mcp`` starts without the rest of the command line: a client waits for its
handshake (``zero_memory.mcp.stdio_front``), and importing every command costs most of a second."""

from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping


def settle_process(environ: MutableMapping[str, str] = os.environ) -> None:
    """What every zm process sets before numpy is first imported (the children it starts inherit it); given
    ``environ``, the environment of a process about to be started (a benchmark's), set the same way.

    numpy advises the kernel to back each array of 4 MB or more with 2 MB pages. Where the kernel compacts
    memory to find one at the array's first write (Linux's default for advised memory), that write waits for
    it: during an import, a search that read its index's training sample back into a new array (64 MB at
    32,000 memories, before the sample was copied as codes) spent 600 ms of system time there, where small
    pages took 50 ms (docs/benchmarks-archive.md, "Recall during an import: pages"); any large array a
    request makes can meet the same wait. A zm process asks for small pages unless its environment says
    otherwise.
    """
    environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")


def main() -> None:
    settle_process()
    if sys.argv[1:] == ["mcp"]:
        from zero_memory.cli.stdio import serve_stdio

        sys.exit(serve_stdio())
    from zero_memory.cli.main import main as command_line

    command_line()
