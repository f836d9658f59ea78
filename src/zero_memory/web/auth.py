"""Who is looking at the dashboard: the signed session, its CSRF token, and one-time login codes.

The session is Starlette's ``SessionMiddleware`` cookie (itsdangerous-signed
with ``ZM_SECRET_KEY``, ``HttpOnly``, ``SameSite=Lax``, ``Secure`` when the
request came over https). It holds the user id and a per-session CSRF token
that every form posts back. Signing is not encryption: nothing secret goes in
the session, the CSRF token is only worth anything to whoever already holds
the cookie.

A one-time code is what ``zm serve`` prints as ``/login/<code>``: it logs the
local user in once, within a few minutes, in the process that printed it.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Receive, Scope, Send

from zero_memory.access.caller import Caller
from zero_memory.access.users import TOKEN_PREFIX, ensure_local_user, session_holds, verify_token
from zero_memory.app import App

SESSION_COOKIE = "zm_session"
SESSION_MAX_AGE_S = 7 * 24 * 3600
LOGIN_CODE_TTL_S = 15 * 60
CSRF_FIELD = "csrf_token"


class LoginRequired(Exception):
    """Raised by a page that needs a user when the session has none."""


class CsrfRefused(Exception):
    """Raised by a form post whose CSRF token is missing or wrong."""


class SecureWhenHttps:
    """Session cookies that carry ``Secure`` exactly when the request came over https.

    ``SessionMiddleware`` fixes its flags at construction, so this holds one
    for each scheme and hands each request to the matching one (uvicorn sets
    the scheme from a trusted proxy's ``X-Forwarded-Proto``).
    """

    def __init__(self, app: ASGIApp, secret_key: str) -> None:
        options: dict[str, Any] = {
            "secret_key": secret_key,
            "session_cookie": SESSION_COOKIE,
            "max_age": SESSION_MAX_AGE_S,
            "same_site": "lax",
        }
        self.plain = SessionMiddleware(app, https_only=False, **options)
        self.secure = SessionMiddleware(app, https_only=True, **options)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        chosen = self.secure if scope.get("scheme") in ("https", "wss") else self.plain
        await chosen(scope, receive, send)


# -- the session --------------------------------------------------------------


def csrf_token(connection: HTTPConnection) -> str:
    """The session's CSRF token, created on first use (the login page needs one too)."""
    token = connection.session.get("csrf")
    if not isinstance(token, str) or not token:
        token = secrets.token_urlsafe(32)
        connection.session["csrf"] = token
    return token


def check_csrf(connection: HTTPConnection, submitted: object) -> None:
    expected = connection.session.get("csrf")
    if not (isinstance(expected, str) and expected and isinstance(submitted, str)):
        raise CsrfRefused
    if not hmac.compare_digest(expected.encode(), submitted.encode()):
        raise CsrfRefused


def log_in(connection: HTTPConnection, uid: str, *, token_id: str | None = None) -> None:
    """Start a fresh session for ``uid``: nothing from before the login survives, not even the CSRF token.

    ``token_id`` names the token the user logged in with: revoking it ends the session.
    """
    connection.session.clear()
    connection.session["uid"] = uid
    connection.session["csrf"] = secrets.token_urlsafe(32)
    if token_id:
        connection.session["token"] = token_id


def log_out(connection: HTTPConnection) -> None:
    connection.session.clear()


def session_uid(connection: HTTPConnection) -> str | None:
    uid = connection.session.get("uid")
    return uid if isinstance(uid, str) and uid else None


def caller_of(app: App, connection: HTTPConnection) -> Caller:
    """The signed-in user as a ``Caller``; ``LoginRequired`` when there is none (or their account is gone)."""
    uid = session_uid(connection)
    if uid is None:
        raise LoginRequired
    if not session_holds(app.store, uid, connection.session.get("token")):
        log_out(connection)
        raise LoginRequired
    return Caller(uid, client="dashboard", author_kind="human")


def user_of_token(app: App, token: str) -> tuple[str, str] | None:
    """(user, token id) for a valid bearer token, else None."""
    token = token.strip()
    uid = verify_token(app.store, token)
    if uid is None:
        return None
    return uid, token.removeprefix(TOKEN_PREFIX).partition("_")[0]


# -- one-time login codes -------------------------------------------------------


def _realm(app: App) -> str:
    """Codes of one data directory: apps sharing a secret key share codes, others never do."""
    return hashlib.sha256((app.settings.secret_key or "").encode()).hexdigest()


@dataclass
class LoginCodes:
    """Single-use login codes held in memory, each valid for ``ttl_s`` seconds."""

    ttl_s: float = LOGIN_CODE_TTL_S
    clock: Callable[[], float] = time.monotonic
    _codes: dict[str, tuple[str, str, float]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def issue(self, realm: str, uid: str) -> str:
        code = secrets.token_urlsafe(24)
        with self._lock:
            now = self.clock()
            self._codes = {c: entry for c, entry in self._codes.items() if entry[2] > now}
            self._codes[code] = (realm, uid, now + self.ttl_s)
        return code

    def redeem(self, realm: str, code: str) -> str | None:
        """The user a code logs in, once; None for an unknown, used, expired or foreign code."""
        with self._lock:
            entry = self._codes.pop(code, None)
        if entry is None:
            return None
        code_realm, uid, expires = entry
        if expires <= self.clock() or not hmac.compare_digest(code_realm, realm):
            return None
        return uid


@cache
def login_codes() -> LoginCodes:
    """This process's codes: ``zm serve`` issues one into it, the login route redeems it."""
    return LoginCodes()


def redeem_login_code(app: App, code: str) -> str | None:
    return login_codes().redeem(_realm(app), code)


def login_link(app: App, base_url: str) -> str:
    """The line ``zm serve`` prints: a link that logs the local user in, once, within 15 minutes."""
    uid = ensure_local_user(app.store, app.settings.user)
    code = login_codes().issue(_realm(app), uid)
    minutes = int(LOGIN_CODE_TTL_S // 60)
    return f"dashboard: {base_url}/login/{code}  (logs {uid} in once, within {minutes} minutes)"
