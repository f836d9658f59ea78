"""The OAuth 2.1 authorization server remote MCP clients use, built from the MCP SDK's pieces.

The SDK's handlers do the protocol: authorization-server and
protected-resource metadata (RFC 8414, RFC 9728), dynamic client
registration (RFC 7591), ``/authorize`` (client, exact redirect URI, PKCE
S256), ``/token`` (the code's redirect URI and PKCE verifier, then our
exchange), ``/revoke`` (RFC 7009). ``Provider`` is the SDK's provider
protocol over ``access.oauth``, which keeps the rows and the rules. Two
pieces are ours: the consent step, which sends the browser to the
dashboard (``web/views/oauth.py``), and client authentication, which checks
client secrets against their stored digests (the SDK's compares plain text).
"""

from __future__ import annotations

import base64
import binascii
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import unquote, urlencode

import anyio.to_thread
from mcp.server.auth.handlers.authorize import AuthorizationHandler
from mcp.server.auth.handlers.metadata import MetadataHandler, ProtectedResourceMetadataHandler
from mcp.server.auth.handlers.register import RegistrationHandler
from mcp.server.auth.handlers.token import TokenHandler
from mcp.server.auth.middleware.client_auth import AuthenticationError, ClientAuthenticator
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    RefreshToken,
    RegistrationError,
    TokenError,
)
from mcp.server.auth.routes import build_metadata
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, RequestBodyLimitMiddleware
from mcp.shared.auth import OAuthClientInformationFull, OAuthMetadata, OAuthToken, ProtectedResourceMetadata
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from pydantic import AnyHttpUrl, Field
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, request_response
from starlette.types import ASGIApp

from zero_memory import errors
from zero_memory.access import oauth
from zero_memory.access.consent import ConsentRequest, sign
from zero_memory.domain.oauth import Refusal
from zero_memory.mcp.no_echo import NoEcho
from zero_memory.settings import OAuthConfig
from zero_memory.store.base import Store

CONSENT_PATH = "/oauth/consent"
PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource"
# PKCE S256: the base64url SHA-256 of the verifier, 43 characters without padding.
S256_CHALLENGE = re.compile(r"^[A-Za-z0-9_-]{43}$")

REFUSALS = {
    Refusal.UNKNOWN: "the code or token is not valid",
    Refusal.EXPIRED: "the code or token has expired",
    Refusal.REVOKED: "the grant was revoked; authorize the client again",
    Refusal.REPLAYED: "the code or refresh token was used already; the grant is revoked, authorize again",
    Refusal.OTHER_CLIENT: "the code or token was issued to another client",
}


@dataclass(frozen=True, slots=True)
class Endpoints:
    """Where this server is reached: the issuer (``ZM_PUBLIC_URL`` or the bound address) and ``/mcp`` below it."""

    issuer: str
    mcp_path: str = "/mcp"

    @property
    def resource(self) -> str:
        return self.issuer + self.mcp_path

    @property
    def resource_metadata_url(self) -> str:
        return self.issuer + PROTECTED_RESOURCE_PATH + self.mcp_path


def same_resource(a: str | None, b: str) -> bool:
    """RFC 8707 resources compared as URLs: a trailing slash and the case of scheme and host do not matter."""
    if not a:
        return False

    def norm(url: str) -> str:
        scheme, _, rest = url.partition("://")
        host, slash, path = rest.partition("/")
        return f"{scheme.lower()}://{host.lower()}{slash}{path}".rstrip("/")

    return norm(a) == norm(b)


class Provider:
    """The SDK's ``OAuthAuthorizationServerProvider`` over ``access.oauth``; the database work runs on a thread."""

    def __init__(
        self, store: Store, config: OAuthConfig, secret_key: str, endpoints: Endpoints, clock: Callable[[], datetime]
    ) -> None:
        self.store = store
        self.config = config
        self.secret_key = secret_key
        self.endpoints = endpoints
        self.clock = clock

    def _deadline(self, moment: datetime) -> float:
        """``moment`` (on the app's clock) as the Unix time the SDK's handlers compare with ``time.time()``.

        The exchange decides expiry on the app's clock; the SDK checks the same
        deadline again on the system clock, so it gets the time left, not the
        stored instant: both agree even when a test moves the app's clock.
        """
        return time.time() + (moment - self.clock()).total_seconds()

    async def _run(self, work: Callable[..., Any], *args: Any) -> Any:
        return await anyio.to_thread.run_sync(work, *args)

    # -- clients ------------------------------------------------------------------

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        found = await self._run(oauth.get_client, self.store, client_id)
        if found is None:
            return None
        return OAuthClientInformationFull.model_validate({**found.metadata, "client_id": found.id})

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        metadata = client_info.model_dump(mode="json", exclude={"client_secret"}, exclude_none=True)
        try:
            await self._run(
                oauth.register_client,
                self.store,
                client_info.client_id,
                client_info.client_secret,
                metadata,
                self.clock(),
            )
        except errors.ZMError as refused:
            raise RegistrationError("invalid_redirect_uri", str(refused)) from None

    # -- authorization ------------------------------------------------------------

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        """Check what the SDK leaves to us, then send the browser to the dashboard's consent page."""
        if not S256_CHALLENGE.match(params.code_challenge):
            raise AuthorizeError(
                "invalid_request", "code_challenge must be an S256 challenge (43 base64url characters)"
            )
        if params.resource is not None and not same_resource(params.resource, self.endpoints.resource):
            raise AuthorizeError("invalid_target", f"this server's only resource is {self.endpoints.resource}")
        request = ConsentRequest(
            client_id=client.client_id,
            redirect_uri=str(params.redirect_uri),
            redirect_uri_explicit=params.redirect_uri_provided_explicitly,
            code_challenge=params.code_challenge,
            state=params.state,
            scopes=tuple(params.scopes or ()),
            resource=self.endpoints.resource,
        )
        return f"{self.endpoints.issuer}{CONSENT_PATH}?{urlencode({'request': sign(self.secret_key, request)})}"

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        # A used or expired code is returned too: the exchange refuses it, and revokes the grant of a replay.
        found = await self._run(oauth.load_code, self.store, authorization_code)
        if found is None:
            return None
        code, grant = found
        return AuthorizationCode(
            code=authorization_code,
            scopes=list(grant.scopes),
            expires_at=self._deadline(code.expires_at),
            client_id=code.client_id,
            code_challenge=code.code_challenge,
            redirect_uri=code.redirect_uri,  # pydantic parses the text
            redirect_uri_provided_explicitly=code.redirect_uri_explicit,
            resource=grant.resource,
            subject=grant.user_id,
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        return await self._tokens(oauth.exchange_code, authorization_code.code, client.client_id)

    # -- tokens -------------------------------------------------------------------

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        found = await self._run(oauth.load_refresh, self.store, refresh_token)
        if found is None:
            return None
        return RefreshToken(
            token=refresh_token,
            client_id=found.client_id,
            scopes=[],
            expires_at=int(self._deadline(found.expires_at)),
            subject=found.user_id,
        )

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        return await self._tokens(oauth.refresh, refresh_token.token, client.client_id)

    async def _tokens(self, exchange: Callable[..., oauth.Issued], presented: str, client_id: str) -> OAuthToken:
        try:
            issued: oauth.Issued = await self._run(
                exchange, self.store, presented, client_id, self.config, self.clock()
            )
        except oauth.OAuthRefused as refused:
            raise TokenError("invalid_grant", REFUSALS[refused.refusal]) from None
        return OAuthToken(
            access_token=issued.access_token,
            expires_in=issued.expires_in,
            refresh_token=issued.refresh_token,
            scope=" ".join(issued.scopes) or None,
        )

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = await self._run(oauth.verify_access, self.store, token, self.clock())
        if found is None:
            return None
        return AccessToken(
            token=token,
            client_id=found.client_id,
            scopes=list(found.scopes),
            expires_at=int(self._deadline(found.expires_at)),
            resource=found.resource,
            subject=found.user_id,
        )

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        await self._run(oauth.revoke_presented, self.store, token.token, token.client_id, self.clock())

    async def exchange_identity_assertion(self, client: OAuthClientInformationFull, params: Any) -> OAuthToken:
        raise TokenError("unsupported_grant_type", "only authorization_code and refresh_token are supported")


class DigestClientAuthenticator(ClientAuthenticator):
    """The SDK's client authentication, comparing a presented client secret with its stored digest."""

    def __init__(self, provider: Provider) -> None:
        super().__init__(provider)
        self.zm = provider

    async def authenticate_request(self, request: Request) -> OAuthClientInformationFull:
        form = await request.form()
        client_id = form.get("client_id")
        if not isinstance(client_id, str) or not client_id:
            raise AuthenticationError("Missing client_id")
        stored = await anyio.to_thread.run_sync(oauth.get_client, self.zm.store, client_id)
        info = await self.zm.get_client(client_id)
        if stored is None or info is None:
            raise AuthenticationError("Invalid client_id")
        presented: str | None = None
        method = info.token_endpoint_auth_method
        if method == "client_secret_basic":
            presented = _basic_secret(request.headers.get("authorization", ""), client_id)
        elif method == "client_secret_post":
            value = form.get("client_secret")
            presented = value if isinstance(value, str) else None
        elif method != "none":
            raise AuthenticationError("Unsupported client authentication method")
        if not oauth.client_secret_matches(stored, presented):
            raise AuthenticationError("Invalid client credentials")
        return info


@dataclass
class Revocation:
    """RFC 7009 token revocation: the client's own access or refresh token ends its grant; 200 either way.

    Ours rather than the SDK's, whose request model requires a ``client_secret``
    field that a public client (PKCE only) has no reason to send.
    """

    provider: Provider
    authenticator: DigestClientAuthenticator

    async def handle(self, request: Request) -> Response:
        headers = {"Cache-Control": "no-store", "Pragma": "no-cache"}
        try:
            client = await self.authenticator.authenticate_request(request)
        except AuthenticationError as refused:
            body = {"error": "invalid_client", "error_description": refused.message}
            return JSONResponse(body, status_code=401, headers=headers)
        token = (await request.form()).get("token")
        if not isinstance(token, str) or not token:
            body = {"error": "invalid_request", "error_description": "token: the token to revoke is required"}
            return JSONResponse(body, status_code=400, headers=headers)
        store, now = self.provider.store, self.provider.clock()
        await anyio.to_thread.run_sync(oauth.revoke_presented, store, token, client.client_id, now)
        return Response(status_code=200, headers=headers)


def _basic_secret(header: str, client_id: str) -> str:
    if not header.startswith("Basic "):
        raise AuthenticationError("Missing or invalid Basic authentication in Authorization header")
    try:
        decoded = base64.b64decode(header[6:], validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError, binascii.Error):
        raise AuthenticationError("Invalid Basic authentication header") from None
    basic_id, colon, secret = decoded.partition(":")
    if not colon or unquote(basic_id) != client_id:
        raise AuthenticationError("Invalid Basic authentication header")
    return unquote(secret)


def _endpoint(handler: Callable[[Request], Any], methods: list[str], *, cors: bool = True) -> ASGIApp:
    """A handler with the SDK's request size limit, no echo of its input in errors and, for what scripts
    call, its open CORS policy."""
    limited = NoEcho(RequestBodyLimitMiddleware(request_response(handler), DEFAULT_MAX_REQUEST_BODY_SIZE))
    if not cors:
        return limited
    return CORSMiddleware(
        app=limited, allow_origins="*", allow_methods=methods, allow_headers=[MCP_PROTOCOL_VERSION_HEADER]
    )


class _ServerMetadata(OAuthMetadata):
    """The SDK's metadata with the issuer as configured: a URL type adds a trailing slash to a bare host, and
    clients compare the issuer as a string."""

    issuer: str  # type: ignore[assignment]


class _ResourceMetadata(ProtectedResourceMetadata):
    """The SDK's resource metadata with the resource and its issuer as configured, as strings (see above)."""

    resource: str  # type: ignore[assignment]
    authorization_servers: list[str] = Field(..., min_length=1)  # type: ignore[assignment]


def routes(provider: Provider) -> list[Route]:
    """Metadata, registration, authorization, token and revocation endpoints, at the issuer's root."""
    endpoints = provider.endpoints
    registration = ClientRegistrationOptions(enabled=True)
    revocation = RevocationOptions(enabled=True)
    metadata = _ServerMetadata.model_validate(
        {
            **dict(build_metadata(AnyHttpUrl(endpoints.issuer), None, registration, revocation)),
            "issuer": endpoints.issuer,
            # Public clients (native apps, CLIs) authenticate with PKCE alone.
            "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic", "none"],
        }
    )
    resource = _ResourceMetadata(
        resource=endpoints.resource, authorization_servers=[endpoints.issuer], resource_name="zero-memory"
    )
    authenticator = DigestClientAuthenticator(provider)
    get, post = ["GET", "OPTIONS"], ["POST", "OPTIONS"]
    resource_metadata = _endpoint(ProtectedResourceMetadataHandler(resource).handle, get)
    return [
        Route("/.well-known/oauth-authorization-server", _endpoint(MetadataHandler(metadata).handle, get), methods=get),
        Route(PROTECTED_RESOURCE_PATH + endpoints.mcp_path, resource_metadata, methods=get),
        Route(PROTECTED_RESOURCE_PATH, resource_metadata, methods=get),
        # A browser navigates to /authorize; no script calls it, so it gets no CORS.
        Route("/authorize", _endpoint(AuthorizationHandler(provider).handle, [], cors=False), methods=["GET", "POST"]),
        Route("/token", _endpoint(TokenHandler(provider, authenticator).handle, post), methods=post),
        Route("/register", _endpoint(RegistrationHandler(provider, options=registration).handle, post), methods=post),
        Route("/revoke", _endpoint(Revocation(provider, authenticator).handle, post), methods=post),
    ]
