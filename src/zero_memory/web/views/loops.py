"""Open loops: every open task and question, oldest first; close one, or reopen one that was closed."""

from __future__ import annotations

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.memory.lifecycle import close_loop, restore_memory
from zero_memory.memory.loops import STATUSES, list_loops
from zero_memory.web import forms
from zero_memory.web.rendering import flash, redirect, render

PAGE = 100


def index(app: App, request: Request, caller: Caller) -> Response:
    status = forms.optional(request.query_params, "status") or "open"
    listing = list_loops(app, caller, status=status, limit=PAGE)
    return render(request, app, caller, "loops.html", {"listing": listing, "status": status, "statuses": STATUSES})


def close(app: App, request: Request, caller: Caller, form: FormData) -> Response:
    result = close_loop(app, caller, request.path_params["memory_id"], forms.optional(form, "note"))
    flash(request, "Closed: reopen it under Closed if that was a mistake." if result.changed else "Already closed.")
    return redirect("/loops")


def reopen(app: App, request: Request, caller: Caller, form: FormData) -> Response:
    result = restore_memory(app, caller, request.path_params["memory_id"])
    flash(request, "Reopened: it is an open loop again." if result.changed else "It was already open.")
    return redirect("/loops?status=closed")
