"""Accounts and tokens: stored hashed, verified in constant time, never reversible."""

from __future__ import annotations

import pytest

from zero_memory import errors
from zero_memory.access import users
from zero_memory.app import App
from zero_memory.clock import utcnow


def test_a_token_verifies_as_its_user_and_is_stored_only_as_a_digest(app: App) -> None:
    with app.store.tx(write=True) as tx:
        token = users.issue_token(tx, "bob")
    assert users.verify_token(app.store, token) == "bob"
    secret = token.removeprefix(users.TOKEN_PREFIX).partition("_")[2]  # as verify_token reads it: "_" may be in it
    assert len(secret) >= 40
    with app.store.tx() as tx:
        rows = tx._query("SELECT token_hash FROM tokens")  # type: ignore[attr-defined]
    assert rows and all(secret not in row["token_hash"] for row in rows)


@pytest.mark.parametrize("token", ["", "zm_", "zm_abc", "Bearer x", "zm_000000000000_nope", "☃"])
def test_malformed_or_unknown_tokens_verify_as_nobody(app: App, token: str) -> None:
    assert users.verify_token(app.store, token) is None


def test_a_token_with_the_right_id_and_a_wrong_secret_is_refused(app: App) -> None:
    with app.store.tx(write=True) as tx:
        token = users.issue_token(tx, "bob")
    assert users.verify_token(app.store, token[:-2] + "xx") is None


def test_revoked_tokens_stop_working(app: App) -> None:
    with app.store.tx(write=True) as tx:
        token = users.issue_token(tx, "bob")
        tx.revoke_tokens("bob", utcnow())
    assert users.verify_token(app.store, token) is None


def test_user_names_are_slugs_and_unique(app: App) -> None:
    with app.store.tx(write=True) as tx, pytest.raises(errors.ZMError, match=r"^conflict:"):
        users.add_user(tx, "bob")
    with app.store.tx(write=True) as tx, pytest.raises(errors.ZMError, match=r"^validation_failed: name"):
        users.add_user(tx, "Bob Smith")


def test_the_first_use_creates_one_local_user(make_app) -> None:  # type: ignore[no-untyped-def]
    app = make_app()
    assert users.ensure_local_user(app.store, None) == "alice"
    assert users.ensure_local_user(app.store, "bob") == "bob"
    with pytest.raises(errors.ZMError, match=r"^not_found: no user carol"):
        users.ensure_local_user(app.store, "carol")
