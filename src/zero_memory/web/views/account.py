"""Deleting one's own account: download the export, then confirm by typing one's name.

The export is the same JSONL ``zm export`` writes. The delete form is refused
until this session downloaded it, so nobody removes their memories without
having been handed a copy; then the name typed must be the account's
(``memory/erasure.py``). The session ends with the account.
"""

from __future__ import annotations

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from zero_memory import errors
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.memory import erasure
from zero_memory.web import auth, forms
from zero_memory.web.rendering import flash, redirect, render

EXPORTED = "exported"  # the session key: the export this session downloaded, by account


def index(app: App, request: Request, caller: Caller) -> Response:
    context = {"exported": request.session.get(EXPORTED) == caller.uid}
    return render(request, app, caller, "account.html", context)


def export(app: App, request: Request, caller: Caller) -> Response:
    body = "".join(line + "\n" for line in erasure.export_lines(app, caller.uid))
    request.session[EXPORTED] = caller.uid
    stamp = app.clock().strftime("%Y%m%dT%H%M%SZ")
    return Response(
        body,
        media_type="application/x-ndjson; charset=utf-8",
        headers={"content-disposition": f'attachment; filename="zero-memory-{caller.uid}-{stamp}.jsonl"'},
    )


def delete(app: App, request: Request, caller: Caller, form: FormData) -> Response:
    user = erasure.account(app, caller.uid)
    erasure.check_confirmation(caller.uid, forms.text(form, "confirm"))
    if request.session.get(EXPORTED) != caller.uid:
        raise errors.validation("export: download your export first (step 1); nothing was deleted")
    erasure.erase(app, user, by_self=True)
    auth.log_out(request)
    flash(request, "Your account and your memories were deleted. Memories you wrote to a team stay, unnamed.")
    return redirect("/login")
