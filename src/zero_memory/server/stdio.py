"""``zm mcp``'s server, behind ``mcp/stdio_front.py``: the app, the MCP server and the background services
of a stdio process (``services.STDIO``), built in the background and spoken to over two pipes, one line a
message, as over the process's own stdin and stdout."""

from __future__ import annotations

import io
import os
import threading
from collections.abc import Iterator
from contextlib import ExitStack

import anyio
from mcp.server.stdio import stdio_server

from zero_memory.access.users import ensure_local_user
from zero_memory.app import App
from zero_memory.bootstrap import build_app
from zero_memory.ids import new_id
from zero_memory.mcp.identity import Identity, stdio_workspace
from zero_memory.mcp.server import ZMServer, build_server
from zero_memory.server.services import STDIO, running
from zero_memory.settings import Settings


class Backend:
    """``send`` a client's line in, read the server's lines from ``lines``; ``close`` ends the session."""

    def __init__(self, app: App, server: ZMServer) -> None:
        self.app = app
        self.server = server
        self._services = ExitStack()
        server_in, self._to_server = os.pipe()
        self._from_server, server_out = os.pipe()
        self._thread = threading.Thread(target=self._serve, args=(server_in, server_out), name="zm-mcp-stdio")

    @classmethod
    def build(cls) -> Backend:
        """What ``zm mcp`` serves: the local user (``ZM_USER``, else the single local one), one session, for
        the repository the client started it in."""
        app = build_app(Settings.from_environ())
        try:
            uid = ensure_local_user(app.store, app.settings.user)
            # One stdio process is one connection: give it a session id, as HTTP's mcp-session-id.
            identity = Identity(
                local_uid=uid, stdio_session=new_id("stdio"), workspace=stdio_workspace(os.environ, os.getcwd())
            )
            return cls(app, build_server(app, identity))
        except BaseException:
            app.close()
            raise

    def start(self) -> None:
        self._services.enter_context(running(self.app, STDIO))
        self._thread.start()

    def send(self, line: bytes) -> None:
        view = memoryview(line)
        while view:
            view = view[os.write(self._to_server, view) :]

    def lines(self) -> Iterator[bytes]:
        with os.fdopen(self._from_server, "rb") as output:
            yield from output

    def close(self) -> None:
        """End of input: the server finishes what it has, then its output ends; then the app closes."""
        os.close(self._to_server)
        self._thread.join()
        self._services.close()
        self.app.close()

    def _serve(self, server_in: int, server_out: int) -> None:
        async def run() -> None:
            with (
                io.TextIOWrapper(os.fdopen(server_in, "rb"), encoding="utf-8", errors="replace") as reading,
                io.TextIOWrapper(os.fdopen(server_out, "wb"), encoding="utf-8", write_through=True) as writing,
            ):
                async with stdio_server(anyio.wrap_file(reading), anyio.wrap_file(writing)) as (read, write):
                    # As MCPServer.run_stdio_async, over these streams instead of the process's own.
                    lowlevel = self.server._lowlevel_server
                    await lowlevel.run(read, write, lowlevel.create_initialization_options())

        anyio.run(run)
