"""OAuth 2.1 records and the rules that decide on them, without a database or a clock of their own.

A user's approval of one client is a *grant*; the authorization code and
every access and refresh token issued from it hang off the grant, so
revoking the grant (from the dashboard, ``zm user oauth revoke``, or by
itself when a code or a refresh token is replayed) ends all of them at once.
Codes and tokens are kept only as digests.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
# Schemes a redirect must never use: they run code or read local files in the browser.
FORBIDDEN_SCHEMES = ("javascript", "data", "file", "vbscript", "about", "blob")
MAX_REDIRECT_URIS = 10
MAX_REDIRECT_URI_CHARS = 2_000


class TokenKind(StrEnum):
    ACCESS = "access"
    REFRESH = "refresh"


@dataclass(frozen=True, slots=True)
class OAuthClient:
    id: str
    name: str
    secret_hash: str | None
    metadata: dict[str, Any]
    created_at: datetime


@dataclass(frozen=True, slots=True)
class OAuthGrant:
    id: str
    user_id: str
    client_id: str
    scopes: tuple[str, ...]
    resource: str
    created_at: datetime
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None
    client_name: str = ""


@dataclass(frozen=True, slots=True)
class OAuthCode:
    code_hash: str
    grant_id: str
    user_id: str
    client_id: str
    redirect_uri: str
    redirect_uri_explicit: bool
    code_challenge: str
    created_at: datetime
    expires_at: datetime
    used_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class OAuthToken:
    id: str
    kind: TokenKind
    token_hash: str
    grant_id: str
    user_id: str
    client_id: str
    created_at: datetime
    expires_at: datetime
    used_at: datetime | None = None
    revoked_at: datetime | None = None


class Refusal(StrEnum):
    """Why a code or a token is not honoured. ``REPLAYED`` also revokes the whole grant."""

    UNKNOWN = "unknown"
    EXPIRED = "expired"
    REVOKED = "revoked"
    REPLAYED = "replayed"
    OTHER_CLIENT = "other_client"


def code_refusal(code: OAuthCode | None, grant: OAuthGrant | None, client_id: str, now: datetime) -> Refusal | None:
    """Whether an authorization code may be exchanged now by ``client_id``; None when it may.

    A code is single use (OAuth 2.1 §4.1.3): a second exchange is a replay,
    the sign of a stolen code, and the grant it came from is revoked.
    """
    if code is None or grant is None:
        return Refusal.UNKNOWN
    if code.client_id != client_id:
        return Refusal.OTHER_CLIENT
    if code.used_at is not None:
        return Refusal.REPLAYED
    if grant.revoked_at is not None:
        return Refusal.REVOKED
    if code.expires_at <= now:
        return Refusal.EXPIRED
    return None


def token_refusal(
    token: OAuthToken | None, grant: OAuthGrant | None, kind: TokenKind, now: datetime, *, client_id: str | None = None
) -> Refusal | None:
    """Whether a token of ``kind`` is honoured now; None when it is.

    A refresh token is rotated on use: presenting a used one again is a
    replay (OAuth 2.1 §4.3.1), which revokes the grant.
    """
    if token is None or grant is None or token.kind is not kind:
        return Refusal.UNKNOWN
    if client_id is not None and token.client_id != client_id:
        return Refusal.OTHER_CLIENT
    if token.revoked_at is not None or grant.revoked_at is not None:
        return Refusal.REVOKED
    if kind is TokenKind.REFRESH and token.used_at is not None:
        return Refusal.REPLAYED
    if token.expires_at <= now:
        return Refusal.EXPIRED
    return None


def redirect_uri_problem(uri: str) -> str | None:
    """Why ``uri`` cannot be registered as a redirect URI; None when it can.

    OAuth 2.1 §2.3.1 and the MCP authorization spec: https, plain http only
    to a loopback address (a native client's local listener), or a private
    scheme of a native app (``cursor://``, ``vscode://``); never a fragment,
    never a scheme that runs code in the browser.
    """
    if len(uri) > MAX_REDIRECT_URI_CHARS:
        return f"a redirect URI is longer than {MAX_REDIRECT_URI_CHARS} characters"
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if not scheme:
        return "a redirect URI must be absolute"
    if parts.fragment or "#" in uri:
        return "a redirect URI must not contain a fragment"
    if scheme in FORBIDDEN_SCHEMES:
        return f"the {scheme}: scheme is not allowed in a redirect URI"
    if scheme == "https":
        return None if parts.hostname else "an https redirect URI needs a host"
    if scheme == "http":
        if parts.hostname in LOOPBACK_HOSTS:
            return None
        return "a plain http redirect URI must point at a loopback address (127.0.0.1, [::1] or localhost)"
    # A private-use scheme (RFC 8252 §7.1): reverse-DNS style names in practice; anything with a dot or
    # a plain app name is accepted, since the client proves itself with PKCE either way.
    return None


def form_action_source(redirect_uri: str) -> str:
    """The CSP source that lets the consent form's answer redirect to ``redirect_uri``.

    Browsers apply ``form-action`` to the redirect that follows a form post,
    so the consent page allows exactly the origin (or the private scheme) of
    the one redirect URI it will send the user to.
    """
    parts = urlsplit(redirect_uri)
    if parts.scheme in ("http", "https"):
        return f"{parts.scheme}://{parts.netloc}"
    return f"{parts.scheme}:"
