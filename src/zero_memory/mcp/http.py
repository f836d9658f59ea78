"""The HTTP edge of MCP: bearer tokens and the Host/Origin check.

Every request to ``/mcp`` must carry ``Authorization: Bearer <token>``: a
token from ``zm user add`` / ``zm user token``, or, when the OAuth server is
on, an access token it issued for this resource (``mcp/oauth.py``). Anything
else is a 401 that says nothing about why; with OAuth on it names the
protected-resource metadata (RFC 9728), where a client finds how to get a
token. The authenticated user rides on the request as
the SDK's ``AuthenticatedUser``, so the SDK also ties each MCP session to the
user who opened it: another user's token on that session reads as an unknown
session.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

import anyio.to_thread
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.transport_security import TransportSecuritySettings
from starlette.authentication import AuthCredentials
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from zero_memory.access import oauth
from zero_memory.access.users import verify_token
from zero_memory.clock import Clock, utcnow
from zero_memory.mcp.oauth import Endpoints, same_resource
from zero_memory.store.base import Store

MAX_TOKEN_CHARS = 512
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
WILDCARD_BINDS = ("0.0.0.0", "::", "")


class BearerAuth:
    """Pure ASGI middleware: 401 unless the request names a valid token, else the user on ``scope``.

    ``endpoints`` turns on OAuth access tokens (bound to ``endpoints.resource``)
    and the ``resource_metadata`` pointer in every 401.
    """

    def __init__(
        self, app: ASGIApp, store: Store, *, endpoints: Endpoints | None = None, clock: Clock = utcnow
    ) -> None:
        self.app = app
        self.store = store
        self.endpoints = endpoints
        self.clock = clock
        challenge = f'Bearer resource_metadata="{endpoints.resource_metadata_url}"' if endpoints else "Bearer"
        self.challenge = challenge

    def user_of(self, token: str) -> str | None:
        if not oauth.is_oauth_token(token):
            return verify_token(self.store, token)
        if self.endpoints is None:
            return None
        access = oauth.verify_access(self.store, token, self.clock())
        if access is None or not same_resource(access.resource, self.endpoints.resource):
            return None
        return access.user_id

    async def _checked(self, token: str) -> str | None:
        """``user_of`` the token: on the event loop where the store reads in this process (a SQLite read of a few
        tens of microseconds costs less than the hop to a worker thread and back), else on a worker thread."""
        if self.store.reads_in_server:
            return await anyio.to_thread.run_sync(self.user_of, token)
        return self.user_of(token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        token = bearer_token(scope)
        uid = await self._checked(token) if token else None
        if uid is None:
            await unauthorized(scope, receive, send, self.challenge)
            return
        user = AuthenticatedUser(AccessToken(token="", client_id=uid, subject=uid, scopes=[]))
        await self.app({**scope, "user": user, "auth": AuthCredentials([])}, receive, send)


def bearer_token(scope: Scope) -> str | None:
    """The token of exactly one well-formed ``Authorization: Bearer <token>`` header, else None."""
    values = [value for name, value in scope["headers"] if name.lower() == b"authorization"]
    if len(values) != 1:
        return None
    scheme, _, rest = values[0].decode("latin-1").partition(" ")
    token = rest.lstrip(" ")  # RFC 6750: "Bearer" 1*SP token
    if scheme.lower() != "bearer" or not token or len(token) > MAX_TOKEN_CHARS or any(c.isspace() for c in token):
        return None
    return token


async def unauthorized(scope: Scope, receive: Receive, send: Send, challenge: str = "Bearer") -> None:
    response = Response(
        "unauthorized", status_code=401, media_type="text/plain", headers={"WWW-Authenticate": challenge}
    )
    await response(scope, receive, send)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def transport_security(bind_host: str, allowed_hosts: Sequence[str] = ()) -> TransportSecuritySettings:
    """The Host/Origin check against DNS rebinding, for a server bound to ``bind_host``.

    Loopback names are always accepted, with any port or none, so local
    clients work whatever port the server runs on. ``allowed_hosts`` adds
    names (a reverse proxy's ``zm.example.com``, with or without a port);
    ``*`` turns the check off. A server bound to a specific address accepts
    that address too; one bound to every interface (0.0.0.0, ::) with no
    allowed hosts checks nothing, as the SDK does, because it cannot know the
    names clients will use — the bearer token is the protection there.
    """
    extra = [name.strip() for name in allowed_hosts if name.strip()]
    if "*" in extra or (bind_host in WILDCARD_BINDS and not extra):
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    names = list(LOOPBACK_NAMES)
    if bind_host not in WILDCARD_BINDS and not is_loopback(bind_host):
        names.append(f"[{bind_host}]" if ":" in bind_host else bind_host)
    names.extend(f"[{name}]" if name.count(":") > 1 and not name.startswith("[") else name for name in extra)
    hosts: list[str] = []
    origins: list[str] = []
    for name in dict.fromkeys(names):
        has_port = name.rsplit("]", 1)[-1].count(":") == 1
        forms = [name] if has_port else [name, f"{name}:*"]
        hosts.extend(forms)
        origins.extend(f"{scheme}://{form}" for scheme in ("http", "https") for form in forms)
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)
