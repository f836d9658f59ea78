"""The dashboard at ``/``: a Starlette sub-app with its own session, security headers and error page.

``zm serve`` mounts ``routes(app)`` after ``/healthz`` and ``/mcp``. Pages are
GET; every change is a form POST that must carry the session's CSRF token and
answers with a redirect (POST/redirect/GET), so everything works without
JavaScript. Views run on a worker thread: the services they call are
synchronous and touch the database.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from urllib.parse import quote

from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from zero_memory import errors
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.memory.validation import invalid_input
from zero_memory.web import auth
from zero_memory.web.rendering import STATIC, local_path, redirect, render
from zero_memory.web.views import account, insights, login, loops, memories, oauth, portability, queue, runs

log = logging.getLogger(__name__)

Page = Callable[[App, Request, Caller], Response]
Action = Callable[[App, Request, Caller, FormData], Response]
Endpoint = Callable[[Request], Awaitable[Response]]

STATUS_OF = {
    errors.Code.VALIDATION_FAILED: 400,
    errors.Code.NOT_FOUND: 404,
    errors.Code.CONFLICT: 409,
    errors.Code.UNAVAILABLE: 503,
    errors.Code.INTERNAL: 500,
}
MAX_FORM_FIELDS = 50
# Pages are self-contained: one stylesheet, one small script, inline SVG; nothing from elsewhere, no framing.
SECURITY_HEADERS = {
    "content-security-policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}


def page(app: App, view: Page) -> Endpoint:
    """A GET page for a signed-in user."""

    async def endpoint(request: Request) -> Response:
        caller = await run_in_threadpool(auth.caller_of, app, request)
        return await run_in_threadpool(view, app, request, caller)

    return endpoint


def action(app: App, view: Action) -> Endpoint:
    """A form POST for a signed-in user: the CSRF token first, then the login."""

    async def endpoint(request: Request) -> Response:
        form = await _checked_form(request)
        caller = await run_in_threadpool(auth.caller_of, app, request)
        return await run_in_threadpool(view, app, request, caller, form)

    return endpoint


def public_page(app: App, view: Callable[[App, Request, Caller | None], Response]) -> Endpoint:
    """A GET page anyone may open (the login pages); ``caller`` is None when nobody is signed in."""

    async def endpoint(request: Request) -> Response:
        caller = await run_in_threadpool(_optional_caller, app, request)
        return await run_in_threadpool(view, app, request, caller)

    return endpoint


def public_action(app: App, view: Callable[[App, Request, Caller | None, FormData], Response]) -> Endpoint:
    async def endpoint(request: Request) -> Response:
        form = await _checked_form(request)
        caller = await run_in_threadpool(_optional_caller, app, request)
        return await run_in_threadpool(view, app, request, caller, form)

    return endpoint


async def _checked_form(request: Request) -> FormData:
    form = await request.form(max_files=0, max_fields=MAX_FORM_FIELDS)
    auth.check_csrf(request, form.get(auth.CSRF_FIELD))
    return form


def _optional_caller(app: App, request: Request) -> Caller | None:
    try:
        return auth.caller_of(app, request)
    except auth.LoginRequired:
        return None


async def home(request: Request) -> Response:
    return redirect("/queue")


def routes(app: App) -> list[BaseRoute]:
    """The dashboard as one mount at ``/``, which ``server/app.py`` mounts after its own routes."""
    return [Mount("/", app=build(app), name="dashboard")]


def build(app: App) -> ASGIApp:
    get, post = ["GET", "HEAD"], ["POST"]
    table = [
        Route("/", home, methods=get),
        Route("/login", public_page(app, login.login_page), methods=get),
        Route("/login", public_action(app, login.login_with_token), methods=post),
        Route("/login/{code}", public_page(app, login.login_with_code), methods=get),
        Route("/logout", public_action(app, login.logout), methods=post),
        Route("/queue", page(app, queue.index), methods=get),
        Route("/queue/{dispute_id}", page(app, queue.detail), methods=get),
        Route("/queue/{dispute_id}/resolve", action(app, queue.resolve), methods=post),
        Route("/portability", page(app, portability.index), methods=get),
        Route("/portability/{candidate_id}", action(app, portability.decide), methods=post),
        Route("/loops", page(app, loops.index), methods=get),
        Route("/loops/{memory_id}/close", action(app, loops.close), methods=post),
        Route("/loops/{memory_id}/reopen", action(app, loops.reopen), methods=post),
        Route("/memories", page(app, memories.index), methods=get),
        Route("/memories/{memory_id}", page(app, memories.detail), methods=get),
        Route("/memories/{memory_id}/restore", action(app, memories.restore), methods=post),
        Route("/memories/{memory_id}/forget", action(app, memories.forget), methods=post),
        Route("/memories/{memory_id}/reaffirm", action(app, memories.reaffirm), methods=post),
        Route("/memories/{memory_id}/pin", action(app, memories.pin), methods=post),
        Route("/memories/{memory_id}/unpin", action(app, memories.unpin), methods=post),
        Route("/runs", page(app, runs.index), methods=get),
        Route("/runs", action(app, runs.start), methods=post),
        Route("/runs/{run_id}", page(app, runs.detail), methods=get),
        Route("/runs/{run_id}/undo", action(app, runs.undo), methods=post),
        Route("/insights", page(app, insights.index), methods=get),
        Route("/oauth/consent", page(app, oauth.consent), methods=get),
        Route("/oauth/consent", action(app, oauth.decide), methods=post),
        Route("/clients", page(app, oauth.clients), methods=get),
        Route("/clients/{grant_id}/revoke", action(app, oauth.revoke), methods=post),
        Route("/account", page(app, account.index), methods=get),
        Route("/account/export", page(app, account.export), methods=get),
        Route("/account/delete", action(app, account.delete), methods=post),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    handlers = ErrorPages(app)
    dashboard = Starlette(
        routes=table,
        middleware=[Middleware(SecurityHeaders), Middleware(auth.SecureWhenHttps, secret_key=_secret(app))],
        exception_handlers={
            auth.LoginRequired: handlers.login_required,
            auth.CsrfRefused: handlers.csrf_refused,
            errors.ZMError: handlers.refusal,
            ValidationError: handlers.invalid,
            HTTPException: handlers.http,
            Exception: handlers.crash,
        },
    )
    return dashboard


def _secret(app: App) -> str:
    key = app.settings.secret_key
    if not key:
        raise errors.internal("the dashboard needs a secret key; build the app with build_app")
    return key


class SecurityHeaders:
    """Adds ``SECURITY_HEADERS`` to every dashboard response that does not set them itself."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        static = scope.get("path", "").startswith("/static/")

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _ in message.get("headers", [])}
                extra = [
                    (name.encode(), value.encode())
                    for name, value in SECURITY_HEADERS.items()
                    if name.encode() not in present and not (static and name == "cache-control")
                ]
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, send_with_headers)


class ErrorPages:
    """One error page for every refusal: the code, the reason, the way back."""

    def __init__(self, app: App) -> None:
        self.app = app

    async def _page(self, request: Request, status: int, title: str, detail: str) -> Response:
        def draw() -> Response:
            uid = auth.session_uid(request)
            caller = Caller(uid, client="dashboard", author_kind="human") if uid else None
            return render(request, self.app, caller, "error.html", {"title": title, "detail": detail}, status=status)

        try:
            return await run_in_threadpool(draw)
        except Exception:
            log.exception("could not render the error page")
            return PlainTextResponse(f"{title}: {detail}", status_code=status)

    async def login_required(self, request: Request, exc: Exception) -> Response:
        if request.method in ("GET", "HEAD"):
            here = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            target = local_path(here, "/queue")
            return redirect(f"/login?next={quote(target, safe='/')}" if target != "/queue" else "/login")
        return redirect("/login")

    async def csrf_refused(self, request: Request, exc: Exception) -> Response:
        detail = (
            "This form was missing its security token or the token had expired. Go back, reload the page and try again."
        )
        return await self._page(request, 403, "Refused", detail)

    async def refusal(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, errors.ZMError)
        return await self._page(request, STATUS_OF.get(exc.code, 400), str(exc.code), str(exc))

    async def invalid(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ValidationError)
        return await self._page(request, 400, "validation_failed", str(invalid_input(exc)))

    async def http(self, request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        titles = {404: "not_found", 405: "method not allowed"}
        detail = "There is no such page." if exc.status_code == 404 else str(exc.detail)
        return await self._page(request, exc.status_code, titles.get(exc.status_code, "error"), detail)

    async def crash(self, request: Request, exc: Exception) -> Response:
        log.exception("dashboard request failed", exc_info=exc)
        return await self._page(request, 500, "internal", "Something went wrong; the server log has the details.")
