"""The OAuth service on both stores: grants, single-use codes, rotation, replay detection, revocation, digests.

Time is passed in, so expiry is tested by moving ``now`` rather than by waiting.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from zero_memory import errors
from zero_memory.access import oauth
from zero_memory.app import App
from zero_memory.domain.oauth import Refusal
from zero_memory.settings import OAuthConfig
from zero_memory.store import system_tx

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
CONFIG = OAuthConfig(code_ttl_s=300, access_token_ttl_s=3600, refresh_token_ttl_s=30 * 86_400)
RESOURCE = "http://127.0.0.1:8787/mcp"
REDIRECT = "http://127.0.0.1:53682/callback"


@pytest.fixture(params=["sqlite", "postgres"])
def app(request: pytest.FixtureRequest, make_app: Callable[..., App]) -> App:
    return make_app(backend=request.param)


def register(app: App, client_id: str = "client-a", secret: str | None = None) -> None:
    metadata = {"client_name": f"Client {client_id}", "redirect_uris": [REDIRECT], "client_secret": secret}
    oauth.register_client(app.store, client_id, secret, metadata, T0)


def approve(app: App, uid: str = "alice", client_id: str = "client-a", now: datetime = T0) -> str:
    return oauth.approve(
        app.store,
        uid,
        client_id,
        redirect_uri=REDIRECT,
        redirect_uri_explicit=True,
        code_challenge="c" * 43,
        scopes=(),
        resource=RESOURCE,
        config=CONFIG,
        now=now,
    )


def tokens(app: App, uid: str = "alice", client_id: str = "client-a") -> oauth.Issued:
    register(app, client_id)
    return oauth.exchange_code(app.store, approve(app, uid, client_id), client_id, CONFIG, T0)


def secret_of(presented: str) -> str:
    """The random part of a code (``zmac_<secret>``) or a token (``zmat_<id>_<secret>``)."""
    return presented.split("_", 2)[2] if presented.startswith(("zmat_", "zmrt_")) else presented.partition("_")[2]


def refused(work: Callable[[], object]) -> Refusal:
    with pytest.raises(oauth.OAuthRefused) as caught:
        work()
    return caught.value.refusal


def test_an_approved_code_becomes_tokens_that_speak_for_the_user(app: App) -> None:
    issued = tokens(app, "bob")
    access = oauth.verify_access(app.store, issued.access_token, T0 + timedelta(minutes=59))
    assert access is not None and (access.user_id, access.client_id, access.resource) == ("bob", "client-a", RESOURCE)
    assert issued.expires_in == 3600 and issued.refresh_token.startswith("zmrt_")
    assert [g.id for g in oauth.grants_of(app.store, "bob")] == [issued.grant_id]
    assert oauth.grants_of(app.store, "alice") == []


def test_a_code_works_once_and_its_replay_revokes_the_tokens_it_gave(app: App) -> None:
    register(app)
    code = approve(app)
    issued = oauth.exchange_code(app.store, code, "client-a", CONFIG, T0)
    assert refused(lambda: oauth.exchange_code(app.store, code, "client-a", CONFIG, T0)) is Refusal.REPLAYED
    assert oauth.verify_access(app.store, issued.access_token, T0) is None
    assert refused(lambda: oauth.refresh(app.store, issued.refresh_token, "client-a", CONFIG, T0)) is Refusal.REVOKED
    assert oauth.grants_of(app.store, "alice") == []


def test_an_expired_code_is_refused_and_stays_unused(app: App) -> None:
    register(app)
    code = approve(app)
    late = T0 + timedelta(seconds=CONFIG.code_ttl_s)
    assert refused(lambda: oauth.exchange_code(app.store, code, "client-a", CONFIG, late)) is Refusal.EXPIRED
    found = oauth.load_code(app.store, code)
    assert found is not None and found[0].used_at is None


def test_a_code_is_refused_to_another_client_and_unknown_codes_are_unknown(app: App) -> None:
    register(app)
    register(app, "client-b")
    code = approve(app)
    assert refused(lambda: oauth.exchange_code(app.store, code, "client-b", CONFIG, T0)) is Refusal.OTHER_CLIENT
    for wrong in ("", "zmac_nope", code[:-1], "x" * 600, "☃"):
        assert refused(lambda w=wrong: oauth.exchange_code(app.store, w, "client-a", CONFIG, T0)) is Refusal.UNKNOWN
    assert oauth.exchange_code(app.store, code, "client-a", CONFIG, T0).access_token


def test_an_access_token_expires(app: App) -> None:
    issued = tokens(app)
    assert oauth.verify_access(app.store, issued.access_token, T0 + timedelta(seconds=3599)) is not None
    assert oauth.verify_access(app.store, issued.access_token, T0 + timedelta(seconds=3600)) is None


def test_a_refresh_rotates_both_tokens_and_a_replay_revokes_the_grant(app: App) -> None:
    first = tokens(app)
    second = oauth.refresh(app.store, first.refresh_token, "client-a", CONFIG, T0 + timedelta(hours=2))
    assert second.refresh_token != first.refresh_token and second.access_token != first.access_token
    assert second.grant_id == first.grant_id
    assert oauth.verify_access(app.store, second.access_token, T0 + timedelta(hours=2)) is not None
    replay = lambda: oauth.refresh(app.store, first.refresh_token, "client-a", CONFIG, T0 + timedelta(hours=3))  # noqa: E731
    assert refused(replay) is Refusal.REPLAYED
    assert oauth.verify_access(app.store, second.access_token, T0 + timedelta(hours=3)) is None
    newest = lambda: oauth.refresh(app.store, second.refresh_token, "client-a", CONFIG, T0 + timedelta(hours=3))  # noqa: E731
    assert refused(newest) is Refusal.REVOKED


def test_a_refresh_token_is_bound_to_its_client_and_expires(app: App) -> None:
    issued = tokens(app)
    register(app, "client-b")
    assert (
        refused(lambda: oauth.refresh(app.store, issued.refresh_token, "client-b", CONFIG, T0)) is Refusal.OTHER_CLIENT
    )
    late = T0 + timedelta(seconds=CONFIG.refresh_token_ttl_s)
    assert refused(lambda: oauth.refresh(app.store, issued.refresh_token, "client-a", CONFIG, late)) is Refusal.EXPIRED
    an_access_token = lambda: oauth.refresh(app.store, issued.access_token, "client-a", CONFIG, T0)  # noqa: E731
    assert refused(an_access_token) is Refusal.UNKNOWN


def test_a_forged_secret_with_a_real_token_id_is_refused(app: App) -> None:
    issued = tokens(app)
    forged = issued.access_token[:-4] + "AAAA"
    assert oauth.verify_access(app.store, forged, T0) is None
    assert oauth.verify_access(app.store, issued.refresh_token, T0) is None, "a refresh token is not an access token"


def test_the_user_revokes_a_grant_and_only_their_own(app: App) -> None:
    issued = tokens(app, "alice")
    with pytest.raises(errors.ZMError) as theirs:
        oauth.revoke_grant(app.store, "bob", issued.grant_id, by="bob", now=T0)
    assert str(theirs.value).startswith("not_found:")
    assert oauth.verify_access(app.store, issued.access_token, T0) is not None
    revoked = oauth.revoke_grant(app.store, "alice", issued.grant_id, by="alice", now=T0)
    assert revoked.revoked_at is not None
    assert oauth.verify_access(app.store, issued.access_token, T0) is None
    with pytest.raises(errors.ZMError) as again:
        oauth.revoke_grant(app.store, "alice", issued.grant_id, by="alice", now=T0)
    assert str(again.value).startswith("conflict:")


def test_a_client_revokes_its_own_token_and_not_another_clients(app: App) -> None:
    issued = tokens(app)
    register(app, "client-b")
    assert oauth.revoke_presented(app.store, issued.refresh_token, "client-b", T0) is False
    assert oauth.verify_access(app.store, issued.access_token, T0) is not None
    assert oauth.revoke_presented(app.store, issued.refresh_token, "client-a", T0) is True
    assert oauth.verify_access(app.store, issued.access_token, T0) is None


def test_revoke_all_ends_every_grant_of_one_user(app: App) -> None:
    one, two = tokens(app, "alice"), tokens(app, "alice", "client-b")
    bobs = tokens(app, "bob", "client-c")
    assert len(oauth.revoke_all(app.store, "alice", by="operator", now=T0)) == 2
    assert all(oauth.verify_access(app.store, t.access_token, T0) is None for t in (one, two))
    assert oauth.verify_access(app.store, bobs.access_token, T0) is not None


def test_client_secrets_are_compared_by_digest(app: App) -> None:
    register(app, "confidential", secret="s3cret-" + "x" * 40)
    client = oauth.get_client(app.store, "confidential")
    assert client is not None and client.secret_hash == oauth.digest("s3cret-" + "x" * 40)
    assert "client_secret" not in client.metadata
    assert oauth.client_secret_matches(client, "s3cret-" + "x" * 40)
    assert not oauth.client_secret_matches(client, "s3cret-" + "x" * 39 + "y")
    assert not oauth.client_secret_matches(client, None)
    register(app, "public")
    public = oauth.get_client(app.store, "public")
    assert public is not None and oauth.client_secret_matches(public, None)
    assert not oauth.client_secret_matches(public, "anything")


@pytest.mark.parametrize("uris", [[], ["http://evil.example/cb"], ["javascript:alert(1)"], [REDIRECT] * 11])
def test_registration_refuses_bad_redirect_uris_and_stores_nothing(app: App, uris: list[str]) -> None:
    with pytest.raises(errors.ZMError) as caught:
        oauth.register_client(app.store, "bad", None, {"redirect_uris": uris}, T0)
    assert str(caught.value).startswith("validation_failed: redirect_uris:")
    assert oauth.get_client(app.store, "bad") is None


def test_every_step_is_audited_by_id_and_no_row_holds_a_token(app: App) -> None:
    register(app, "client-a", secret="client-secret-" + "z" * 30)
    code = approve(app)
    first = oauth.exchange_code(app.store, code, "client-a", CONFIG, T0)
    second = oauth.refresh(app.store, first.refresh_token, "client-a", CONFIG, T0)
    oauth.revoke_grant(app.store, "alice", first.grant_id, by="alice", now=T0)
    with system_tx(app.store, "test") as tx:
        actions = [
            e.action
            for a in ("oauth.client.register", "oauth.grant", "oauth.token.issue", "oauth.revoke")
            for e in tx.audit_actions(a)
        ]
        dumped = json.dumps(
            {
                table: tx._query(f"SELECT * FROM {table}")  # type: ignore[attr-defined]
                for table in ("audit", "oauth_clients", "oauth_grants", "oauth_codes", "oauth_tokens")
            }
        )
    assert sorted(actions) == sorted(
        ["oauth.client.register", "oauth.grant", "oauth.token.issue", "oauth.token.issue", "oauth.revoke"]
    )
    for secret in (code, first.access_token, first.refresh_token, second.access_token, second.refresh_token):
        assert secret not in dumped and secret_of(secret) not in dumped
    assert "client-secret-" not in dumped
    assert oauth.digest(secret_of(first.access_token)) in dumped, "the test must read the token table"


def test_deleting_a_users_oauth_rows_leaves_other_users_and_the_clients(app: App) -> None:
    alices, bobs = tokens(app, "alice"), tokens(app, "bob", "client-b")
    oauth.refresh(app.store, alices.refresh_token, "client-a", CONFIG, T0)
    with system_tx(app.store, "test", write=True) as tx:
        assert tx.delete_oauth_of_user("alice") == 1
        left = {
            table: tx._query(f"SELECT user_id FROM {table}")  # type: ignore[attr-defined]
            for table in ("oauth_grants", "oauth_codes", "oauth_tokens")
        }
    assert all(row["user_id"] == "bob" for rows in left.values() for row in rows)
    assert all(left.values())
    assert oauth.verify_access(app.store, bobs.access_token, T0) is not None
    assert oauth.get_client(app.store, "client-a") is not None
