"""The server: one composition of the transports and the background services, for ``zm serve`` and ``zm mcp``.

``services`` declares what a process runs beside its requests (scheduler, capture retries, batched
telemetry) and starts it; ``app`` is the HTTP server (``/healthz``, MCP at ``/mcp``, ``verify_api``, OAuth,
and the dashboard of ``web/`` at ``/``); ``stdio`` is ``zm mcp``'s server behind ``mcp/stdio_front``;
``process`` is one ``zm serve`` process, and ``workers`` (with ``spread`` and ``affinity``) keeps N of them
on one port.
"""
