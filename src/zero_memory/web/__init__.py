"""The HTTP server: one Starlette app with ``/healthz``, MCP at ``/mcp`` and the dashboard at ``/``."""
