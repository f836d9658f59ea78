"""The HTTP side of ``zm verify`` for a team's server: a member's verifier reads the project's anchors and
reports what the code became, with the same bearer token its agent uses for MCP.

``GET /api/anchors?project=HINT`` answers ``{"project", "anchors": [...]}``; ``POST /api/anchors/verify``
takes ``{"project", "target", "repository", "reports": [{"anchor": {...}, "outcome": {...}}]}`` and answers
what was applied. Errors are ``{"error": "<code>: <detail>"}`` with the code's HTTP status.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route

from zero_memory import errors
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.mcp.http import BearerAuth
from zero_memory.memory import verification

MAX_BODY = 20_000_000
MAX_REPORTS = 50_000
STATUS = {"validation_failed": 400, "not_found": 404, "conflict": 409}


def routes(app: App) -> list[BaseRoute]:
    return [
        Route("/api/anchors", BearerAuth(_endpoint(app, _anchors), app.store, clock=app.clock)),
        Route("/api/anchors/verify", BearerAuth(_endpoint(app, _verify), app.store, clock=app.clock)),
    ]


Handler = Callable[[App, Caller, Request, Any], dict[str, Any]]


def _endpoint(app: App, handler: Handler) -> Callable[..., Awaitable[None]]:
    async def asgi(scope: Any, receive: Any, send: Any) -> None:
        request = Request(scope, receive)
        caller = Caller(scope["user"].access_token.subject, client="zm verify")
        try:
            body = None
            if request.method == "POST":
                raw = await request.body()
                if len(raw) > MAX_BODY:
                    raise errors.validation(f"body: at most {MAX_BODY} bytes")
                try:
                    body = json.loads(raw)
                except json.JSONDecodeError as error:
                    raise errors.validation("body: not JSON") from error
            elif request.method != "GET":
                raise errors.validation("method: GET or POST")
            answer = await anyio.to_thread.run_sync(lambda: handler(app, caller, request, body))
            response = JSONResponse(answer)
        except errors.ZMError as error:
            response = JSONResponse({"error": str(error)}, status_code=STATUS.get(error.code, 400))
        await response(scope, receive, send)

    return asgi


def _anchors(app: App, caller: Caller, request: Request, _: Any) -> dict[str, Any]:
    hint = request.query_params.get("project")
    if not hint:
        raise errors.validation("project: the repository's path, remote or project name")
    project = verification.project_for(app, caller, hint)
    records = verification.anchors_of_project(app, caller, project)
    return {"project": project, "anchors": [verification.record_json(r) for r in records]}


def _verify(app: App, caller: Caller, _: Request, body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise errors.validation("body: a JSON object")
    reports = body.get("reports")
    if not isinstance(reports, list) or len(reports) > MAX_REPORTS:
        raise errors.validation(f"reports: a list of at most {MAX_REPORTS}")
    project, target, repository = (body.get(k) for k in ("project", "target", "repository"))
    if not all(isinstance(v, str) and 0 < len(v) <= 500 for v in (project, target, repository)):
        raise errors.validation("project, target, repository: non-empty strings")
    parsed = []
    for item in reports:
        if not isinstance(item, dict) or not isinstance(item.get("anchor"), dict):
            raise errors.validation("reports: each {anchor, outcome}")
        parsed.append(
            verification.Report(
                verification.record_from_json(item["anchor"]), verification.outcome_from_json(item.get("outcome") or {})
            )
        )
    result = verification.apply(app, caller, str(project), parsed, target=str(target), repository=str(repository))
    return result.model_dump()
