"""The portability queue: project memories the judge thinks hold everywhere, to approve or dismiss."""

from __future__ import annotations

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from zero_memory import errors
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.hygiene.portability import list_portability, resolve_portability
from zero_memory.web import forms
from zero_memory.web.rendering import flash, redirect, render

STATUSES = ("pending", "approved", "dismissed")
DECISIONS = ("approve", "dismiss")


def index(app: App, request: Request, caller: Caller) -> Response:
    status = forms.optional(request.query_params, "status") or "pending"
    proposals = list_portability(app, caller, status)
    return render(
        request, app, caller, "portability.html", {"proposals": proposals, "status": status, "statuses": STATUSES}
    )


def decide(app: App, request: Request, caller: Caller, form: FormData) -> Response:
    decision = forms.text(form, "decision")
    if decision not in DECISIONS:
        raise errors.validation("decision: expected approve or dismiss")
    result = resolve_portability(app, caller, request.path_params["candidate_id"], decision == "approve")
    if result.status == "approved":
        flash(request, f"Approved: {result.memory_id} now lives in {result.scope}.")
    else:
        flash(request, f"Dismissed: {result.memory_id} stays in {result.scope}.")
    return redirect("/portability")
