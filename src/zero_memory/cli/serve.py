"""``zm serve`` (MCP over streamable HTTP, the dashboard, /healthz) and ``zm mcp`` (MCP over stdio).

The server modules are imported inside the commands: every other ``zm`` command starts without them.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

import typer

from zero_memory import __version__
from zero_memory.access.users import ensure_local_user
from zero_memory.cli.common import app, err_console, handles_errors
from zero_memory.ids import new_id

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8787


def register(cli: typer.Typer) -> None:
    cli.command("serve")(serve)
    cli.command("mcp")(mcp)


@handles_errors
def serve(
    host: Annotated[
        str, typer.Option("--host", help="Address to bind; keep the default unless a TLS proxy fronts the server.")
    ] = DEFAULT_HOST,
    port: Annotated[int, typer.Option("--port", help="Port to bind.", min=1, max=65535)] = DEFAULT_PORT,
    allowed_hosts: Annotated[
        str,
        typer.Option(
            "--allowed-hosts",
            envvar="ZM_ALLOWED_HOSTS",
            help="Comma-separated Host names /mcp accepts besides loopback, e.g. the name a reverse proxy "
            "forwards (zm.example.com); * accepts any.",
        ),
    ] = "",
) -> None:
    """Serve MCP over streamable HTTP at /mcp (bearer token required), the dashboard at /, and /healthz."""
    import uvicorn

    from zero_memory.mcp.http import WILDCARD_BINDS, is_loopback
    from zero_memory.web import dashboard
    from zero_memory.web.app import create_app
    from zero_memory.web.auth import login_link

    application = app()
    names = [name for name in allowed_hosts.replace(",", " ").split() if name]
    shown = f"[{host}]" if ":" in host else host
    public_url = application.settings.public_url or (f"http://{shown}:{port}" if is_loopback(host) else None)
    if application.settings.public_url:
        # The name clients use through the proxy is one /mcp must accept.
        names.append(urlsplit(application.settings.public_url).netloc)
    asgi = create_app(
        application,
        host=host,
        allowed_hosts=names,
        extra_routes=dashboard.routes(application),
        public_url=public_url,
    )
    typer.echo(
        f"zero-memory {__version__} listening on http://{shown}:{port}  "
        f"(MCP: http://{shown}:{port}/mcp, health: /healthz)"
    )
    if public_url:
        typer.echo(f"OAuth for remote MCP clients: issuer {public_url}, resource {public_url}/mcp")
    typer.echo(login_link(application, public_url or f"http://{shown}:{port}"))
    if not is_loopback(host):
        err_console.print(
            f"warning: bound to {host or 'every interface'}, reachable from other machines. Bearer tokens "
            "travel in clear text over plain HTTP: put a TLS-terminating reverse proxy in front"
            + (" and set ZM_ALLOWED_HOSTS to the names it forwards." if host in WILDCARD_BINDS else "."),
            markup=False,
            highlight=False,
        )
    if public_url is None:
        err_console.print(
            "note: OAuth for remote MCP clients is off: set ZM_PUBLIC_URL to the https:// address clients use "
            "(bearer tokens work either way).",
            markup=False,
            highlight=False,
        )
    uvicorn.run(asgi, host=host, port=port, log_level="warning", lifespan="on", timeout_graceful_shutdown=5)


@handles_errors
def mcp() -> None:
    """Serve MCP over stdio as the local user (ZM_USER, else the single local user): zm mcp."""
    import anyio

    from zero_memory.capture.worker import CaptureWorker
    from zero_memory.mcp.identity import Identity
    from zero_memory.mcp.server import build_server

    application = app()
    uid = ensure_local_user(application.store, application.settings.user)
    # One stdio process is one connection: give it a session id, as HTTP's mcp-session-id.
    server = build_server(application, Identity(local_uid=uid, stdio_session=new_id("stdio")))
    worker = CaptureWorker(application)
    worker.start()
    try:
        anyio.run(server.run_stdio_async)
    finally:
        worker.stop()
