"""The dashboard: its login, pages and forms at ``/`` and below, one Starlette mount (``dashboard.routes``)
that ``server/app.py`` serves beside MCP."""
