"""OAuth in the dashboard: the consent step of a client's authorization, and the clients a user authorized.

``/authorize`` (``mcp/oauth.py``) sends the browser here with a signed
request; the page needs a signed-in user like every other (the login keeps
the way back), shows which client asks, and answers with a form that
carries the session's CSRF token. Approving creates the grant and its code
and redirects to the client's registered redirect URI; denying redirects
there with ``access_denied``.
"""

from __future__ import annotations

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from zero_memory import errors
from zero_memory.access import oauth
from zero_memory.access.caller import Caller
from zero_memory.access.consent import ConsentRequest, unsign
from zero_memory.app import App
from zero_memory.domain.oauth import form_action_source
from zero_memory.web import forms
from zero_memory.web.rendering import flash, redirect, render

EXPIRED = (
    "This authorization request is not valid or has expired (they last 15 minutes). Start again from your MCP client."
)
# The dashboard's policy, except that the consent form may lead to the client's redirect URI.
CONSENT_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; "
    "base-uri 'none'; form-action 'self' {target}; frame-ancestors 'none'"
)


def _request(app: App, signed: str) -> ConsentRequest:
    found = unsign(app.settings.secret_key or "", signed)
    if found is None:
        raise errors.validation(EXPIRED)
    return found


def consent(app: App, request: Request, caller: Caller) -> Response:
    signed = request.query_params.get("request", "")
    asked = _request(app, signed)
    client = oauth.get_client(app.store, asked.client_id)
    if client is None:
        raise errors.not_found("OAuth client with that id: start again from your MCP client")
    context = {"client": client, "asked": asked, "signed": signed}
    page = render(request, app, caller, "consent.html", context)
    page.headers["content-security-policy"] = CONSENT_CSP.format(target=form_action_source(asked.redirect_uri))
    return page


def decide(app: App, request: Request, caller: Caller, form: FormData) -> Response:
    """Approve or deny, then send the browser back to the client (RFC 6749 §4.1.2)."""
    asked = _request(app, forms.text(form, "request"))
    now = app.clock()
    if forms.text(form, "decision") != "approve":
        oauth.record_denial(app.store, caller.uid, asked.client_id, now)
        return redirect(oauth.redirect_to(asked.redirect_uri, error="access_denied", state=asked.state))
    code = oauth.approve(
        app.store,
        caller.uid,
        asked.client_id,
        redirect_uri=asked.redirect_uri,
        redirect_uri_explicit=asked.redirect_uri_explicit,
        code_challenge=asked.code_challenge,
        scopes=asked.scopes,
        resource=asked.resource,
        config=app.settings.oauth,
        now=now,
    )
    return redirect(oauth.redirect_to(asked.redirect_uri, code=code, state=asked.state))


def clients(app: App, request: Request, caller: Caller) -> Response:
    return render(request, app, caller, "clients.html", {"grants": oauth.grants_of(app.store, caller.uid)})


def revoke(app: App, request: Request, caller: Caller, form: FormData) -> Response:
    grant = oauth.revoke_grant(app.store, caller.uid, request.path_params["grant_id"], by=caller.uid, now=app.clock())
    flash(request, f"Revoked {grant.client_name}: its tokens no longer work.")
    return redirect("/clients")
