"""Hygiene runs: start a scan or a re-judge, read what a run did, undo it."""

from __future__ import annotations

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.hygiene.on_demand import scan_hygiene
from zero_memory.hygiene.undo import undo_run
from zero_memory.web import forms
from zero_memory.web.rendering import flash, redirect, render
from zero_memory.web.runs import ACTIONS, list_runs, run_detail


def index(app: App, request: Request, caller: Caller) -> Response:
    return render(request, app, caller, "runs.html", {"page": list_runs(app, caller)})


def start(app: App, request: Request, caller: Caller, form: FormData) -> Response:
    """Start a full cycle in the background; its page shows the summary as it comes in."""
    rejudge, dry_run = forms.flag(form, "rejudge"), forms.flag(form, "dry_run")
    result = scan_hygiene(app, caller, rejudge=rejudge, dry_run=dry_run, wait=False)
    what = "Re-judge" if rejudge else "Scan"
    flash(request, f"{what}{' (dry run)' if dry_run else ''} started.")
    return redirect(f"/runs/{result.run_id}")


def detail(app: App, request: Request, caller: Caller) -> Response:
    found = run_detail(app, caller, request.path_params["run_id"])
    return render(request, app, caller, "run.html", {"detail": found, "run": found.view, "labels": ACTIONS})


def undo(app: App, request: Request, caller: Caller, form: FormData) -> Response:
    report = undo_run(app, request.path_params["run_id"], actor=caller.uid, owner=caller.uid)
    restored = len(report.restored)
    flash(
        request,
        f"Undone: restored {restored} {'memory' if restored == 1 else 'memories'}, "
        f"removed {report.unlinked} {'link' if report.unlinked == 1 else 'links'}.",
    )
    return redirect(f"/runs/{report.run_id}")
