"""Logging in with a bearer token or a one-time link, and logging out."""

from __future__ import annotations

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.web import auth, forms
from zero_memory.web.rendering import flash, local_path, redirect, render

HOME = "/queue"


def login_page(app: App, request: Request, caller: Caller | None) -> Response:
    if caller is not None:
        return redirect(local_path(request.query_params.get("next"), HOME))
    return render(request, app, None, "login.html", {"next": local_path(request.query_params.get("next"), "")})


def login_with_token(app: App, request: Request, caller: Caller | None, form: FormData) -> Response:
    found = auth.user_of_token(app, forms.text(form, "token"))
    next_page = local_path(forms.text(form, "next"), "")
    if found is None:
        context = {"next": next_page, "error": "That token is not valid. Print a new one with 'zm user token NAME'."}
        return render(request, app, None, "login.html", context, status=401)
    uid, token_id = found
    auth.log_in(request, uid, token_id=token_id)
    return redirect(next_page or HOME)


def login_with_code(app: App, request: Request, caller: Caller | None) -> Response:
    uid = auth.redeem_login_code(app, request.path_params["code"])
    if uid is None:
        error = "That login link was used already or has expired. Restart 'zm serve' for a new one, or use a token."
        return render(request, app, None, "login.html", {"next": "", "error": error}, status=401)
    auth.log_in(request, uid)
    return redirect(local_path(request.query_params.get("next"), HOME))


def logout(app: App, request: Request, caller: Caller | None, form: FormData) -> Response:
    auth.log_out(request)
    flash(request, "Logged out.")
    return redirect("/login")
