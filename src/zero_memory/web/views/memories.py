"""Memories: search across every visible scope, one memory's whole story, restore, forget and re-affirm."""

from __future__ import annotations

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.memory.browse import LIFECYCLES, browse
from zero_memory.memory.lifecycle import forget as forget_memory
from zero_memory.memory.lifecycle import get_memory, restore_memory
from zero_memory.memory.lifecycle import reaffirm as reaffirm_memory
from zero_memory.memory.pins import pin as pin_memory
from zero_memory.memory.pins import unpin as unpin_memory
from zero_memory.web import forms
from zero_memory.web.rendering import flash, redirect, render

PAGE = 50


def index(app: App, request: Request, caller: Caller) -> Response:
    params = request.query_params
    listing = browse(
        app,
        caller,
        query=forms.text(params, "q"),
        lifecycle=forms.optional(params, "lifecycle") or "live",
        limit=forms.integer(params, "limit", PAGE),
    )
    return render(request, app, caller, "memories.html", {"listing": listing, "lifecycles": LIFECYCLES})


def detail(app: App, request: Request, caller: Caller) -> Response:
    found = get_memory(
        app, caller, request.path_params["memory_id"], cursor=forms.optional(request.query_params, "cursor")
    )
    return render(request, app, caller, "memory.html", {"found": found, "m": found.memory})


def restore(app: App, request: Request, caller: Caller, form: FormData) -> Response:
    result = restore_memory(app, caller, request.path_params["memory_id"])
    flash(request, "Restored: the memory is live again." if result.changed else "The memory was already live.")
    return redirect(f"/memories/{result.id}")


def forget(app: App, request: Request, caller: Caller, form: FormData) -> Response:
    result = forget_memory(app, caller, request.path_params["memory_id"], forms.optional(form, "reason"))
    flash(request, "Forgotten: restore it here if that was a mistake." if result.changed else "Already invalidated.")
    return redirect(f"/memories/{result.id}")


def reaffirm(app: App, request: Request, caller: Caller, form: FormData) -> Response:
    result = reaffirm_memory(app, caller, request.path_params["memory_id"])
    flash(request, "Upheld: you vouched that it is still true; its freshness budget starts today.")
    return redirect(f"/memories/{result.id}")


def pin(app: App, request: Request, caller: Caller, form: FormData) -> Response:
    result = pin_memory(app, caller, request.path_params["memory_id"])
    flash(request, "Pinned: every briefing now leads with this rule." if result.changed else "Already pinned.")
    return redirect(f"/memories/{result.id}")


def unpin(app: App, request: Request, caller: Caller, form: FormData) -> Response:
    result = unpin_memory(app, caller, request.path_params["memory_id"])
    flash(request, "Unpinned: it is no longer a standing rule." if result.changed else "It was not pinned.")
    return redirect(f"/memories/{result.id}")
