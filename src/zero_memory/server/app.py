"""The Starlette app ``zm serve`` runs: ``/healthz``, MCP at ``/mcp``, ``zm verify``'s API, OAuth, and the
dashboard at ``/``, with the background services its process runs (``services.py``).

``/mcp`` is the MCP SDK's streamable HTTP transport behind the bearer-token
middleware; ``/healthz`` needs no token. With a ``public_url`` the OAuth
authorization server is on: its metadata and endpoints sit at the root
(``mcp/oauth.py``) and its consent step is a dashboard page. The dashboard
(``web/``, ``/`` and below) is mounted last and brings its own login; nothing
here protects it.
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
from zero_memory.mcp import oauth
from zero_memory.mcp.http import BearerAuth, transport_security
from zero_memory.mcp.identity import Identity
from zero_memory.mcp.oauth import Endpoints, Provider
from zero_memory.mcp.server import build_server
from zero_memory.server import verify_api
from zero_memory.server.services import HTTP, Services, running
from zero_memory.server.warm import WarmUp
from zero_memory.web import dashboard as web_dashboard

MCP_PATH = "/mcp"


async def healthz(request: Request) -> JSONResponse:
    """Up, and ``warm``: whether this process has loaded what its first call would otherwise wait for
    (``server/warm.py``; under ``--workers N``, of the worker that answered)."""
    warm: WarmUp | None = getattr(request.state, "warm", None)
    return JSONResponse({"status": "ok", "version": __version__, "warm": warm is not None and warm.warm.is_set()})


def create_app(
    app: App,
    *,
    host: str = "127.0.0.1",
    allowed_hosts: Sequence[str] = (),
    public_url: str | None = None,
    services: Services = HTTP,
    dashboard: bool = True,
) -> Starlette:
    """The whole HTTP server for one ``App``.

    ``host`` is the address the server binds (it decides the Host check, see
    ``mcp.http.transport_security``); ``allowed_hosts`` are further Host names
    to accept (``ZM_ALLOWED_HOSTS``). ``public_url`` is the origin clients
    reach the server at (``ZM_PUBLIC_URL``, else the bound loopback address);
    without one OAuth stays off and bearer tokens are the only way in.
    ``services`` are the background services this process runs while it
    serves: one process of several runs the scheduler and the capture retries
    for all. ``dashboard`` mounts the dashboard at ``/`` (a benchmark of MCP
    alone leaves it out).
    """
    server = build_server(app, Identity())
    mcp_app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        transport_security=transport_security(host, allowed_hosts),
    )

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[dict[str, WarmUp | None]]:
        # Starlette runs only the outer app's lifespan; the MCP session manager needs its own.
        with running(app, services) as started:
            async with server.session_manager.run():
                yield {"warm": started.warm}

    endpoints = Endpoints(public_url, MCP_PATH) if public_url else None
    routes: list[BaseRoute] = [
        Route("/healthz", healthz, methods=["GET", "HEAD"]),
        Route(MCP_PATH, BearerAuth(mcp_app, app.store, endpoints=endpoints, clock=app.clock)),
        *verify_api.routes(app),
    ]
    if endpoints is not None:
        provider = Provider(app.store, app.settings.oauth, _secret(app), endpoints, app.clock)
        routes.extend(oauth.routes(provider))
    if dashboard:
        routes.extend(web_dashboard.routes(app))
    return Starlette(routes=routes, lifespan=lifespan)


def _secret(app: App) -> str:
    if not app.settings.secret_key:
        raise errors.internal("OAuth needs a secret key to sign consent requests; build the app with build_app")
    return app.settings.secret_key
