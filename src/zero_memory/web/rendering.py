"""Templates and the page frame: the Jinja environment, its filters, flash messages, redirects.

Autoescaping is on for every template, so memory text (which agents wrote
and anyone may have fed them) is always text, never markup.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import jinja2
from starlette.requests import HTTPConnection, Request
from starlette.responses import RedirectResponse, Response
from starlette.templating import Jinja2Templates

from zero_memory import __version__
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.conflicts.queue import pending_count
from zero_memory.web.auth import CSRF_FIELD, csrf_token

HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"


def age(days: float | None) -> str:
    """``0.02`` → ``29 min``: how old, in the largest unit that reads naturally."""
    if days is None:
        return ""
    minutes = days * 24 * 60
    if minutes < 1:
        return "just now"
    if minutes < 60:
        return f"{int(minutes)} min"
    if minutes < 47.5 * 60:
        return f"{round(minutes / 60)} h"
    if days < 59.5:
        return f"{round(days)} d"
    if days < 730:
        return f"{round(days / 30)} mo"
    return f"{days / 365:.1f} y"


def when(moment: datetime | str | None) -> str:
    """A timestamp as ``2025-03-01 14:03 UTC``."""
    if moment is None or moment == "":
        return ""
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment.replace("Z", "+00:00"))
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def ago(moment: datetime | str | None) -> str:
    """How long ago a timestamp was, as ``age`` words it: ``3 d ago``."""
    if moment is None or moment == "":
        return ""
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment.replace("Z", "+00:00"))
    days = (datetime.now(UTC) - moment).total_seconds() / 86_400
    text = age(max(days, 0.0))
    return text if text == "just now" else f"{text} ago"


def percent(value: float | None) -> str:
    return "" if value is None else f"{value * 100:.0f}%"


def query(base: str, **params: Any) -> str:
    """A link to ``base`` with the non-empty ``params`` as its query string."""
    kept = {k: v for k, v in params.items() if v not in (None, "", False)}
    return f"{base}?{urlencode(kept)}" if kept else base


@cache
def static_version() -> str:
    """A fingerprint of the static files, so a new release is never served a stale stylesheet."""
    digest = hashlib.sha256(__version__.encode())
    for path in sorted(STATIC.iterdir()):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:10]


@cache
def templates() -> Jinja2Templates:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(age=age, ago=ago, when=when, percent=percent)
    env.globals.update(query=query, version=__version__, csrf_field=CSRF_FIELD)
    return Jinja2Templates(env=env)


def flash(connection: HTTPConnection, message: str) -> None:
    """A one-line note shown on the next page (the page a form redirects to)."""
    connection.session["flash"] = message


def render(
    request: Request,
    app: App,
    caller: Caller | None,
    name: str,
    context: dict[str, Any] | None = None,
    *,
    status: int = 200,
) -> Response:
    """A page inside the frame: navigation with the pending count, the flash, the CSRF token."""
    frame = {
        "user": caller.uid if caller else None,
        "pending": pending_count(app, caller) if caller else 0,
        "flash": request.session.pop("flash", None),
        "csrf": csrf_token(request),
        "path": request.url.path,
        "here": request.url.path + (f"?{request.url.query}" if request.url.query else ""),
        "static_version": static_version(),
    }
    return templates().TemplateResponse(request, name, {**frame, **(context or {})}, status_code=status)


def redirect(to: str) -> Response:
    """See other: every successful form post ends here (POST/redirect/GET)."""
    return RedirectResponse(to, status_code=303)


def local_path(candidate: object, default: str) -> str:
    """``candidate`` when it is a path on this site, else ``default``: no open redirects."""
    if not isinstance(candidate, str) or not candidate.startswith("/") or candidate.startswith("//"):
        return default
    if "\\" in candidate or any(ord(c) < 32 for c in candidate):
        return default
    return candidate
