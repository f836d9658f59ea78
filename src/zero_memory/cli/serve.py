"""``zm serve`` (MCP over streamable HTTP, the dashboard, /healthz) and ``zm mcp`` (MCP over stdio).

What the operator types and reads; the server itself is composed in ``server/``. The server modules are
imported inside the commands: every other ``zm`` command starts without them.
"""

from __future__ import annotations

from functools import partial
from typing import Annotated
from urllib.parse import urlsplit

import typer

from zero_memory import __version__
from zero_memory.access.users import ensure_local_user
from zero_memory.cli.common import app, err_console, fail, handles_errors

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
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            help="Server processes on the one port; each MCP session stays on the process that opened it. "
            "More than one pays only with a core per process to spare (docs/deployment.md).",
            min=1,
            max=64,
        ),
    ] = 1,
) -> None:
    """Serve MCP over streamable HTTP at /mcp (bearer token required), the dashboard at /, and /healthz."""
    import uvicorn

    from zero_memory.mcp.http import WILDCARD_BINDS, is_loopback
    from zero_memory.server.process import Options, one_blas_thread, serve_worker, server_app
    from zero_memory.server.workers import listening_sockets, run_workers
    from zero_memory.web.auth import login_link

    one_blas_thread()
    application = app()
    names = [name for name in allowed_hosts.replace(",", " ").split() if name]
    shown = f"[{host}]" if ":" in host else host
    public_url = application.settings.public_url or (f"http://{shown}:{port}" if is_loopback(host) else None)
    if application.settings.public_url:
        # The name clients use through the proxy is one /mcp must accept.
        names.append(urlsplit(application.settings.public_url).netloc)
    options = Options(host=host, allowed_hosts=tuple(names), public_url=public_url, base_url=f"http://{shown}:{port}")
    # Made before any worker starts, so that workers starting together find them: the schema, the secret key.
    ensure_local_user(application.store, application.settings.user)
    asgi = None if workers > 1 else server_app(application, options)
    listeners = None
    if asgi is None:
        try:
            listeners = listening_sockets(host, port, workers)
        except OSError as error:
            fail(f"cannot listen on {shown}:{port}: {error.strerror or error}")
    typer.echo(
        f"zero-memory {__version__} listening on http://{shown}:{port}  "
        f"(MCP: http://{shown}:{port}/mcp, health: /healthz)" + (f", {workers} workers" if workers > 1 else "")
    )
    if public_url:
        typer.echo(f"OAuth for remote MCP clients: issuer {public_url}, resource {public_url}/mcp")
    if asgi is not None:
        typer.echo(login_link(application, public_url or options.base_url))
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
    if asgi is not None:
        uvicorn.run(asgi, host=host, port=port, log_level="warning", lifespan="on", timeout_graceful_shutdown=5)
    elif listeners is not None and run_workers(workers, listeners, partial(serve_worker, options)) != 0:
        fail("a worker stopped as it started: its error is above")


@handles_errors
def mcp() -> None:
    """Serve MCP over stdio as the local user (ZM_USER, else the single local user): zm mcp."""
    from zero_memory.cli.stdio import serve_stdio

    status = serve_stdio()
    if status:
        raise typer.Exit(status)
