"""The review queue: pending pairs side by side, single-subject disputes, and how each is settled."""

from __future__ import annotations

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.conflicts.models import Resolution
from zero_memory.conflicts.queue import get_conflict, list_conflicts
from zero_memory.conflicts.resolve import resolve_conflict
from zero_memory.insights import QUEUE_VERDICTS
from zero_memory.web import forms
from zero_memory.web.rendering import flash, local_path, redirect, render

PAGE = 20
ORIGINS = ("scan", "write", "rescan", "retro", "challenge", "stale_suspect")
STATUSES = ("pending", "resolved", "dismissed")


def index(app: App, request: Request, caller: Caller) -> Response:
    params = request.query_params
    filters = {
        "status": forms.optional(params, "status") or "pending",
        "verdict": forms.optional(params, "verdict"),
        "origin": forms.optional(params, "origin"),
    }
    listing = list_conflicts(app, caller, **filters, limit=PAGE, cursor=forms.optional(params, "cursor"))
    context = {
        "listing": listing,
        "filters": filters,
        "verdicts": QUEUE_VERDICTS,
        "origins": ORIGINS,
        "statuses": STATUSES,
    }
    return render(request, app, caller, "queue.html", context)


def detail(app: App, request: Request, caller: Caller) -> Response:
    conflict = get_conflict(app, caller, request.path_params["dispute_id"])
    return render(request, app, caller, "dispute.html", {"conflict": conflict})


def resolve(app: App, request: Request, caller: Caller, form: FormData) -> Response:
    result = resolve_conflict(app, caller, request.path_params["dispute_id"], forms.choice(form), human=True)
    flash(request, settled(result))
    if result.created:
        return redirect(f"/memories/{result.created}")
    return redirect(local_path(form.get("next"), "/queue"))


def settled(result: Resolution) -> str:
    """What a settlement did, in one line for the next page."""
    how = result.resolution
    if "merge" in how:
        return "Merged: this new memory supersedes both."
    if "winner" in how:
        return f"Kept {how['winner']}; invalidated {', '.join(result.invalidated) or 'nothing (already gone)'}."
    if "forget" in how:
        return f"Forgot {how['forget']}. Restore it from its page if that was a mistake."
    if how.get("retire"):
        return "Retired. Restore it from its page if that was a mistake."
    if how.get("uphold"):
        return "Upheld: the memory stays as it is."
    return "Kept both."
