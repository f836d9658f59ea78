"""The Starlette app ``zm serve`` runs: ``/healthz``, MCP at ``/mcp``, OAuth, and room for the dashboard.

``/mcp`` is the MCP SDK's streamable HTTP transport behind the bearer-token
middleware; ``/healthz`` needs no token. With a ``public_url`` the OAuth
authorization server is on: its metadata and endpoints sit at the root
(``mcp/oauth.py``) and its consent step is a dashboard page. The dashboard's
routes (``/`` and below) come in through ``extra_routes`` and bring their
own login; nothing here protects them.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from zero_memory import __version__, errors
from zero_memory.app import App
from zero_memory.capture.worker import CaptureWorker
from zero_memory.hygiene import runs
from zero_memory.hygiene.scheduler import Scheduler
from zero_memory.mcp import oauth
from zero_memory.mcp.http import BearerAuth, transport_security
from zero_memory.mcp.identity import Identity
from zero_memory.mcp.oauth import Endpoints, Provider
from zero_memory.mcp.server import build_server
from zero_memory.web import verify_api

MCP_PATH = "/mcp"


async def healthz(request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok", "version": __version__})


def create_app(
    app: App,
    *,
    host: str = "127.0.0.1",
    allowed_hosts: Sequence[str] = (),
    extra_routes: Sequence[BaseRoute] = (),
    public_url: str | None = None,
    background: bool = True,
) -> Starlette:
    """The whole HTTP server for one ``App``.

    ``host`` is the address the server binds (it decides the Host check, see
    ``mcp.http.transport_security``); ``allowed_hosts`` are further Host names
    to accept (``ZM_ALLOWED_HOSTS``); ``extra_routes`` are mounted after
    ``/healthz`` and ``/mcp`` — the dashboard's place. ``public_url`` is the
    origin clients reach the server at (``ZM_PUBLIC_URL``, else the bound
    loopback address); without one OAuth stays off and bearer tokens are the
    only way in. ``background`` runs the scheduler (when configured) and the
    capture retries: one process of several may do it for all.
    """
    server = build_server(app, Identity())
    mcp_app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        transport_security=transport_security(host, allowed_hosts),
    )

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        runs.interrupt_orphans(app)
        scheduler = None
        if background and app.settings.scan_interval_hours:
            scheduler = Scheduler(app, app.settings.scan_interval_hours)
            scheduler.start()
        # Retries of extractions that failed, and chunks a stopped process left behind.
        worker = CaptureWorker(app) if background else None
        if worker is not None:
            worker.start()
        # Usage events and surfacings go in batches while the server runs, the last at shutdown.
        app.telemetry.start()
        # Starlette runs only the outer app's lifespan; the MCP session manager needs its own.
        try:
            async with server.session_manager.run():
                yield
        finally:
            app.telemetry.stop()
            if worker is not None:
                worker.stop()
            if scheduler is not None:
                scheduler.stop()

    endpoints = Endpoints(public_url, MCP_PATH) if public_url else None
    routes: list[BaseRoute] = [
        Route("/healthz", healthz, methods=["GET", "HEAD"]),
        Route(MCP_PATH, BearerAuth(mcp_app, app.store, endpoints=endpoints, clock=app.clock)),
        *verify_api.routes(app),
    ]
    if endpoints is not None:
        provider = Provider(app.store, app.settings.oauth, _secret(app), endpoints, app.clock)
        routes.extend(oauth.routes(provider))
    routes.extend(extra_routes)
    return Starlette(routes=routes, lifespan=lifespan)


def _secret(app: App) -> str:
    if not app.settings.secret_key:
        raise errors.internal("OAuth needs a secret key to sign consent requests; build the app with build_app")
    return app.settings.secret_key
