"""The authorization request a client started, carried to the dashboard's consent page and back.

``/authorize`` checks the client, its redirect URI and its PKCE challenge,
then sends the user's browser to ``/oauth/consent?request=...``. The request
travels signed with ``ZM_SECRET_KEY`` (itsdangerous, with a timestamp), so
any ``zm serve`` process sharing the key can show and answer it, and nobody
can alter the redirect URI or the challenge on the way. It holds nothing
secret: the PKCE challenge is a hash, the state is the client's own.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from itsdangerous import BadData, URLSafeTimedSerializer

CONSENT_SALT = "zero-memory/oauth-consent/v1"
CONSENT_MAX_AGE_S = 15 * 60
MAX_SIGNED_CHARS = 8_000


@dataclass(frozen=True, slots=True)
class ConsentRequest:
    client_id: str
    redirect_uri: str
    redirect_uri_explicit: bool
    code_challenge: str
    state: str | None
    scopes: tuple[str, ...]
    resource: str


def _serializer(secret_key: str) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(secret_key, salt=CONSENT_SALT)


def sign(secret_key: str, request: ConsentRequest) -> str:
    fields = asdict(request)
    fields["scopes"] = list(request.scopes)
    return _serializer(secret_key).dumps(fields)


def unsign(secret_key: str, signed: str, *, max_age_s: int = CONSENT_MAX_AGE_S) -> ConsentRequest | None:
    """The request, if it was signed with this key within ``max_age_s``; None for anything else."""
    if not signed or len(signed) > MAX_SIGNED_CHARS:
        return None
    try:
        fields = _serializer(secret_key).loads(signed, max_age=max_age_s)
        return ConsentRequest(
            client_id=str(fields["client_id"]),
            redirect_uri=str(fields["redirect_uri"]),
            redirect_uri_explicit=bool(fields["redirect_uri_explicit"]),
            code_challenge=str(fields["code_challenge"]),
            state=None if fields["state"] is None else str(fields["state"]),
            scopes=tuple(str(s) for s in fields["scopes"]),
            resource=str(fields["resource"]),
        )
    except (BadData, KeyError, TypeError, ValueError, json.JSONDecodeError):
        return None
