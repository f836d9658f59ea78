"""The MCP surface: thin tools over the memory services, one server for stdio and streamable HTTP.

``server.build_server`` assembles the server; ``tooling`` is how a tool is
declared and run; each ``tools_*`` module holds one group of tools; ``http``
is the bearer-token edge of the HTTP transport. ``stdio_front`` is ``zm mcp``:
it answers a client's handshake from ``catalogue`` while the real server is
built behind it (``server/stdio.py``). Which transport serves and what runs
beside it is ``server/``'s to compose.
"""
