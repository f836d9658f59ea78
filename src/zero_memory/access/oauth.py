"""The OAuth 2.1 authorization server's service: clients, grants, codes, access and refresh tokens.

The HTTP side (metadata, the SDK's handlers, the consent page) lives in
``mcp/oauth.py`` and ``web/views/oauth.py``; this module holds the rules and
the rows. What a client receives is shown once: codes, access tokens
(``zmat_<id>_<secret>``), refresh tokens (``zmrt_<id>_<secret>``) and client
secrets are stored as SHA-256 digests, like bearer tokens (256 random bits
each, so a fast digest is the right tool). Every grant, every issue of
tokens and every revocation writes an audit row that names ids, never a
token.

On PostgreSQL (row-level security, migration 0009) a presented code, token
or client id is looked up before anyone is known to be calling, so those
look-ups run as the named system pass ``oauth``; what a signed-in user does
(approve, list, revoke) acts for that user.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from zero_memory import errors
from zero_memory.domain.oauth import (
    MAX_REDIRECT_URIS,
    OAuthClient,
    OAuthCode,
    OAuthGrant,
    OAuthToken,
    Refusal,
    TokenKind,
    code_refusal,
    redirect_uri_problem,
    token_refusal,
)
from zero_memory.ids import new_id
from zero_memory.settings import OAuthConfig
from zero_memory.store import system_tx
from zero_memory.store.base import Store, Tx

ACCESS_PREFIX = "zmat_"
REFRESH_PREFIX = "zmrt_"
CODE_PREFIX = "zmac_"
MAX_CLIENT_NAME_CHARS = 100
MAX_PRESENTED_CHARS = 512
PREFIXES = {TokenKind.ACCESS: ACCESS_PREFIX, TokenKind.REFRESH: REFRESH_PREFIX}
# The system pass of look-ups made before a caller is known (the client's request names no user yet).
PASS = "oauth"


class OAuthRefused(Exception):
    """A code or token the server does not honour; ``refusal`` says why (``REPLAYED`` revoked the grant)."""

    def __init__(self, refusal: Refusal) -> None:
        self.refusal = refusal
        super().__init__(refusal.value)


@dataclass(frozen=True, slots=True)
class Issued:
    """What a token request answers with, in plain text, once."""

    access_token: str
    refresh_token: str
    expires_in: int
    scopes: tuple[str, ...]
    grant_id: str


@dataclass(frozen=True, slots=True)
class Access:
    """Who an honoured access token speaks for."""

    user_id: str
    client_id: str
    grant_id: str
    expires_at: datetime
    scopes: tuple[str, ...]
    resource: str


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def _audit(tx: Tx, actor: str, action: str, owner: str | None, payload: dict[str, Any], at: datetime) -> None:
    tx.add_audit(actor=actor, action=action, owner=owner, memory_ids=[], payload=payload, run_id=None, at=at)


# -- clients ---------------------------------------------------------------------------------------


def register_client(
    store: Store, client_id: str, secret: str | None, metadata: dict[str, Any], now: datetime
) -> OAuthClient:
    """Store a dynamically registered client (RFC 7591); ``metadata`` is what it registered, less its secret."""
    uris = [str(uri) for uri in metadata.get("redirect_uris") or []]
    if not uris or len(uris) > MAX_REDIRECT_URIS:
        raise errors.validation(f"redirect_uris: give between 1 and {MAX_REDIRECT_URIS} redirect URIs")
    for uri in uris:
        problem = redirect_uri_problem(uri)
        if problem:
            raise errors.validation(f"redirect_uris: {problem}")
    name = str(metadata.get("client_name") or "").strip()[:MAX_CLIENT_NAME_CHARS] or "unnamed client"
    kept = {key: value for key, value in metadata.items() if key != "client_secret"}
    client = OAuthClient(client_id, name, digest(secret) if secret else None, kept, now)
    with system_tx(store, PASS, write=True) as tx:
        tx.add_oauth_client(client)
        payload = {"client_id": client_id, "client_name": name, "redirect_uris": uris}
        _audit(tx, "oauth", "oauth.client.register", None, payload, now)
    return client


def get_client(store: Store, client_id: str) -> OAuthClient | None:
    if not client_id or len(client_id) > MAX_PRESENTED_CHARS:
        return None
    with system_tx(store, PASS) as tx:
        return tx.get_oauth_client(client_id)


def client_secret_matches(client: OAuthClient, presented: str | None) -> bool:
    """A confidential client's secret, compared by digest in constant time; a public client has none to match."""
    if client.secret_hash is None:
        return presented is None or presented == ""
    if not presented or len(presented) > MAX_PRESENTED_CHARS:
        return False
    return hmac.compare_digest(digest(presented), client.secret_hash)


# -- grants and codes ------------------------------------------------------------------------------


def approve(
    store: Store,
    uid: str,
    client_id: str,
    *,
    redirect_uri: str,
    redirect_uri_explicit: bool,
    code_challenge: str,
    scopes: Sequence[str],
    resource: str,
    config: OAuthConfig,
    now: datetime,
) -> str:
    """The user ``uid`` approves ``client_id``: a new grant and its single-use authorization code."""
    code = CODE_PREFIX + secrets.token_urlsafe(32)
    with store.tx(write=True) as tx:
        tx.act_as(uid)
        client = tx.get_oauth_client(client_id)
        if client is None:
            raise errors.not_found("OAuth client with that id: register the client again")
        if tx.get_user(uid) is None:
            raise errors.not_found(f"user {uid}")
        grant = OAuthGrant(new_id("grant"), uid, client_id, tuple(scopes), resource, now)
        tx.add_oauth_grant(grant)
        tx.add_oauth_code(
            OAuthCode(
                code_hash=digest(code),
                grant_id=grant.id,
                user_id=uid,
                client_id=client_id,
                redirect_uri=redirect_uri,
                redirect_uri_explicit=redirect_uri_explicit,
                code_challenge=code_challenge,
                created_at=now,
                expires_at=now + timedelta(seconds=config.code_ttl_s),
            )
        )
        payload = {"grant_id": grant.id, "client_id": client_id, "client_name": client.name, "scopes": list(scopes)}
        _audit(tx, uid, "oauth.grant", uid, payload, now)
    return code


def redirect_to(redirect_uri: str, **params: str | None) -> str:
    """The client's redirect URI with the answer added to its query (its own parameters kept)."""
    parts = urlsplit(redirect_uri)
    query = parse_qsl(parts.query, keep_blank_values=True)
    query.extend((name, value) for name, value in params.items() if value is not None)
    return urlunsplit(parts._replace(query=urlencode(query)))


def record_denial(store: Store, uid: str, client_id: str, now: datetime) -> None:
    with store.tx(write=True) as tx:
        tx.act_as(uid)
        _audit(tx, uid, "oauth.deny", uid, {"client_id": client_id[:100]}, now)


def load_code(store: Store, code: str) -> tuple[OAuthCode, OAuthGrant] | None:
    """The code and its grant, whatever their state (the exchange decides); None for an unknown code."""
    if not code.startswith(CODE_PREFIX) or len(code) > MAX_PRESENTED_CHARS:
        return None
    with system_tx(store, PASS) as tx:
        found = tx.get_oauth_code(digest(code))
        grant = tx.get_oauth_grant(found.grant_id) if found else None
    return (found, grant) if found and grant else None


def exchange_code(store: Store, code: str, client_id: str, config: OAuthConfig, now: datetime) -> Issued:
    """Trade an authorization code for tokens, once. A replayed code revokes its grant (and its tokens)."""
    with system_tx(store, PASS, write=True) as tx:
        found = tx.get_oauth_code(digest(code)) if code.startswith(CODE_PREFIX) else None
        grant = tx.get_oauth_grant(found.grant_id) if found else None
        refusal = code_refusal(found, grant, client_id, now)
        if refusal is None and found is not None and not tx.use_oauth_code(found.code_hash, now):
            refusal = Refusal.REPLAYED
        if refusal is Refusal.REPLAYED and grant is not None:
            _revoke(tx, grant, by=grant.user_id, reason="code_replayed", at=now)
        issued = _issue(tx, grant, "authorization_code", config, now) if refusal is None and grant else None
    # Raised after the transaction commits: a replay's revocation must stick.
    if issued is None:
        raise OAuthRefused(refusal or Refusal.UNKNOWN)
    return issued


# -- tokens ----------------------------------------------------------------------------------------


def _split(token: str, kind: TokenKind) -> tuple[str, str] | None:
    prefix = PREFIXES[kind]
    if not token.startswith(prefix) or len(token) > MAX_PRESENTED_CHARS:
        return None
    token_id, _, secret = token[len(prefix) :].partition("_")
    return (token_id, secret) if token_id and secret else None


def _find(tx: Tx, token: str, kind: TokenKind) -> OAuthToken | None:
    """The stored token a presented one names, if its secret matches; constant work either way."""
    parts = _split(token, kind)
    if parts is None:
        return None
    token_id, secret = parts
    found = tx.get_oauth_token(token_id)
    stored = found.token_hash if found else digest(token_id)
    matches = hmac.compare_digest(digest(secret), stored)
    return found if found is not None and matches else None


def _new_token(kind: TokenKind, grant: OAuthGrant, ttl_s: float, now: datetime) -> tuple[str, OAuthToken]:
    token_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    row = OAuthToken(
        id=token_id,
        kind=kind,
        token_hash=digest(secret),
        grant_id=grant.id,
        user_id=grant.user_id,
        client_id=grant.client_id,
        created_at=now,
        expires_at=now + timedelta(seconds=ttl_s),
    )
    return f"{PREFIXES[kind]}{token_id}_{secret}", row


def _issue(tx: Tx, grant: OAuthGrant, via: str, config: OAuthConfig, now: datetime) -> Issued:
    access, access_row = _new_token(TokenKind.ACCESS, grant, config.access_token_ttl_s, now)
    refresh, refresh_row = _new_token(TokenKind.REFRESH, grant, config.refresh_token_ttl_s, now)
    tx.add_oauth_token(access_row)
    tx.add_oauth_token(refresh_row)
    tx.touch_oauth_grant(grant.id, now)
    payload = {
        "grant_id": grant.id,
        "client_id": grant.client_id,
        "via": via,
        "access_token_id": access_row.id,
        "refresh_token_id": refresh_row.id,
    }
    _audit(tx, grant.user_id, "oauth.token.issue", grant.user_id, payload, now)
    return Issued(access, refresh, int(config.access_token_ttl_s), grant.scopes, grant.id)


def load_refresh(store: Store, token: str) -> OAuthToken | None:
    """The refresh token a client presents, whatever its state (``refresh`` decides)."""
    with system_tx(store, PASS) as tx:
        return _find(tx, token, TokenKind.REFRESH)


def refresh(store: Store, token: str, client_id: str, config: OAuthConfig, now: datetime) -> Issued:
    """Rotate: a new access and refresh token for a live refresh token, which is then spent.

    A spent refresh token presented again means two parties hold it: the
    grant is revoked, so the thief's copy and the client's both stop working
    and the user approves the client again.
    """
    with system_tx(store, PASS, write=True) as tx:
        found = _find(tx, token, TokenKind.REFRESH)
        grant = tx.get_oauth_grant(found.grant_id) if found else None
        refusal = token_refusal(found, grant, TokenKind.REFRESH, now, client_id=client_id)
        if refusal is None and found is not None and not tx.use_oauth_token(found.id, now):
            refusal = Refusal.REPLAYED
        if refusal is Refusal.REPLAYED and grant is not None:
            _revoke(tx, grant, by=grant.user_id, reason="refresh_token_replayed", at=now)
        issued = _issue(tx, grant, "refresh_token", config, now) if refusal is None and grant else None
    if issued is None:
        raise OAuthRefused(refusal or Refusal.UNKNOWN)
    return issued


def verify_access(store: Store, token: str, now: datetime) -> Access | None:
    """Who an access token speaks for, or None (unknown, forged, expired, revoked). Never raises on bad input."""
    if _split(token, TokenKind.ACCESS) is None:
        return None
    with system_tx(store, PASS) as tx:
        found = _find(tx, token, TokenKind.ACCESS)
        grant = tx.get_oauth_grant(found.grant_id) if found else None
    if found is None or grant is None or token_refusal(found, grant, TokenKind.ACCESS, now) is not None:
        return None
    return Access(found.user_id, found.client_id, grant.id, found.expires_at, grant.scopes, grant.resource)


def is_oauth_token(token: str) -> bool:
    return token.startswith((ACCESS_PREFIX, REFRESH_PREFIX))


# -- revocation ------------------------------------------------------------------------------------


def _revoke(tx: Tx, grant: OAuthGrant, *, by: str, reason: str, at: datetime) -> bool:
    revoked = tx.revoke_oauth_grant(grant.id, at)
    if revoked:
        payload = {"grant_id": grant.id, "client_id": grant.client_id, "reason": reason}
        _audit(tx, by, "oauth.revoke", grant.user_id, payload, at)
    return revoked


def revoke_presented(store: Store, token: str, client_id: str, now: datetime) -> bool:
    """RFC 7009 revocation by the client: an access or refresh token ends its whole grant."""
    with system_tx(store, PASS, write=True) as tx:
        found = _find(tx, token, TokenKind.ACCESS) or _find(tx, token, TokenKind.REFRESH)
        if found is None or found.client_id != client_id:
            return False
        grant = tx.get_oauth_grant(found.grant_id)
        return grant is not None and _revoke(tx, grant, by=found.user_id, reason="client_revoked", at=now)


def revoke_grant(store: Store, uid: str, grant_id: str, *, by: str, now: datetime) -> OAuthGrant:
    """The user (or an operator, ``by``) revokes one of ``uid``'s grants; another user's grant is not found."""
    with store.tx(write=True) as tx:
        tx.act_as(uid)
        grant = tx.get_oauth_grant(grant_id) if len(grant_id) <= MAX_PRESENTED_CHARS else None
        if grant is None or grant.user_id != uid:
            # The id is not repeated: whatever was typed there (a pasted token) stays out of the answer.
            raise errors.not_found(f"authorized client of {uid} with that id (zm user oauth list {uid} shows them)")
        if grant.revoked_at is not None:
            raise errors.conflict(f"authorized client {grant_id} was revoked already")
        _revoke(tx, grant, by=by, reason="revoked_by_user" if by == uid else "revoked_by_operator", at=now)
        found = tx.get_oauth_grant(grant_id)
    assert found is not None
    return found


def revoke_all(store: Store, uid: str, *, by: str, now: datetime) -> list[OAuthGrant]:
    """Every live grant of ``uid``, revoked (``zm user oauth revoke NAME --all``)."""
    with store.tx(write=True) as tx:
        tx.act_as(uid)
        if tx.get_user(uid) is None:
            raise errors.not_found(f"user {uid}")
        grants = tx.oauth_grants_of(uid)
        for grant in grants:
            _revoke(tx, grant, by=by, reason="revoked_by_operator" if by != uid else "revoked_by_user", at=now)
    return grants


def grants_of(store: Store, uid: str) -> list[OAuthGrant]:
    """The clients ``uid`` has authorized and not revoked, oldest first."""
    with store.tx() as tx:
        tx.act_as(uid)
        if tx.get_user(uid) is None:
            raise errors.not_found(f"user {uid}")
        return tx.oauth_grants_of(uid)
