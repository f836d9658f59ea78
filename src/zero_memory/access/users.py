"""Accounts and their bearer tokens.

A token is ``zm_<id>_<secret>`` with 256 random bits; only a SHA-256 digest of
the secret is stored (the standard for high-entropy API tokens: a slow
password hash buys nothing against 256 bits and would cost every request).
Verification looks the row up by id and compares digests in constant time.
"""

from __future__ import annotations

import getpass
import hashlib
import hmac
import secrets
from datetime import datetime

from zero_memory import errors
from zero_memory.clock import utcnow
from zero_memory.domain import scopes
from zero_memory.domain.records import User
from zero_memory.store import system_tx
from zero_memory.store.base import Store, Tx

TOKEN_PREFIX = "zm_"


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def default_local_uid() -> str:
    try:
        name = getpass.getuser()
    except (KeyError, OSError):
        name = "local"
    slug = scopes.slugify(name)
    return slug if scopes.is_slug(slug) else "local"


def add_user(tx: Tx, uid: str, *, display_name: str | None = None, is_local: bool = False) -> User:
    if not scopes.is_slug(uid):
        raise errors.validation(
            f"name: {uid[:40]!r} is not a valid user name (lowercase letters, digits, - and _; at most 63)"
        )
    if tx.get_user(uid) is not None:
        raise errors.conflict(f"user {uid} exists already")
    user = User(id=uid, display_name=display_name or uid, created_at=utcnow(), is_local=is_local)
    tx.add_user(user)
    tx.add_audit(
        actor=uid, action="user.add", owner=uid, memory_ids=[], payload={"user": uid}, run_id=None, at=user.created_at
    )
    return user


def issue_token(tx: Tx, uid: str) -> str:
    if tx.get_user(uid) is None:
        raise errors.not_found(f"user {uid}")
    token_id = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    tx.add_token(token_id, uid, _digest(secret), utcnow())
    tx.add_audit(
        actor=uid,
        action="token.issue",
        owner=uid,
        memory_ids=[],
        payload={"token_id": token_id},
        run_id=None,
        at=utcnow(),
    )
    return f"{TOKEN_PREFIX}{token_id}_{secret}"


def verify_token(store: Store, token: str) -> str | None:
    """The user a bearer token belongs to, or None. Never raises on malformed input."""
    if not token.startswith(TOKEN_PREFIX):
        return None
    token_id, _, secret = token[len(TOKEN_PREFIX) :].partition("_")
    if not token_id or not secret:
        return None
    # Whose token it is, is what this looks up: no caller yet.
    with system_tx(store, "auth") as tx:
        row = tx.get_token(token_id)
    if row is None:
        # Spend the same work as a real comparison so timing does not tell ids apart.
        hmac.compare_digest(_digest(secret), _digest(token_id))
        return None
    user_id, stored = row
    return user_id if hmac.compare_digest(_digest(secret), stored) else None


def ensure_local_user(store: Store, uid: str | None) -> str:
    """The user stdio and the CLI speak as: ``ZM_USER``, else the single local user (created on first use)."""
    with system_tx(store, "local-user", write=True) as tx:
        # Processes starting together must not both create the local user.
        tx.serialize("local-user")
        if uid:
            if tx.get_user(uid) is None:
                if tx.list_users():
                    raise errors.not_found(f"user {uid} (create it with 'zm user add {uid}')")
                add_user(tx, uid, is_local=True)
            return uid
        local = [u for u in tx.list_users() if u.is_local]
        if local:
            return local[0].id
        name = default_local_uid()
        if tx.get_user(name) is not None:
            return name
        return add_user(tx, name, is_local=True).id


# -- the account service: each opens its own transaction, for the edges (zm user, the dashboard) --------------


def create_account(store: Store, uid: str) -> str:
    """An operator creates a user; their first bearer token (shown once)."""
    with system_tx(store, "operator", write=True) as tx:
        add_user(tx, uid)
        return issue_token(tx, uid)


def list_accounts(store: Store) -> list[User]:
    with system_tx(store, "operator") as tx:
        return tx.list_users()


def account_ids(store: Store) -> list[str]:
    return [u.id for u in list_accounts(store)]


def require_account(store: Store, uid: str) -> None:
    """``not_found`` unless the user exists (an operator's check, before acting for them)."""
    with system_tx(store, "operator") as tx:
        if tx.get_user(uid) is None:
            raise errors.not_found(f"user {uid}")


def reissue_token(store: Store, uid: str, *, revoke_others: bool, at: datetime) -> str:
    """A new bearer token for a user (shown once); ``revoke_others`` revokes their earlier ones first."""
    with system_tx(store, "operator", write=True) as tx:
        if revoke_others and tx.get_user(uid) is not None:
            tx.revoke_tokens(uid, at)
        return issue_token(tx, uid)


def session_holds(store: Store, uid: str, token_id: object) -> bool:
    """Whether a signed-in session still stands: its user exists and, when it signed in with a token
    (``token_id``, a string), that token is still theirs."""
    with store.tx() as tx:
        tx.act_as(uid)
        gone = tx.get_user(uid) is None
        if isinstance(token_id, str):
            row = tx.get_token(token_id)
            gone = gone or row is None or row[0] != uid
    return not gone
