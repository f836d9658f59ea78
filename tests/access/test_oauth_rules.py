"""The OAuth decisions, as tables: which codes and tokens are honoured, which redirect URIs may be registered."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from zero_memory.access.consent import ConsentRequest, sign, unsign
from zero_memory.domain.oauth import (
    OAuthCode,
    OAuthGrant,
    OAuthToken,
    Refusal,
    TokenKind,
    code_refusal,
    form_action_source,
    redirect_uri_problem,
    token_refusal,
)

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
LATER = NOW + timedelta(minutes=5)
EARLIER = NOW - timedelta(minutes=5)


def grant(revoked: bool = False) -> OAuthGrant:
    return OAuthGrant(
        "grant_1", "alice", "client-a", (), "http://127.0.0.1/mcp", EARLIER, revoked_at=NOW if revoked else None
    )


def code(*, expires: datetime = LATER, used: bool = False) -> OAuthCode:
    return OAuthCode(
        "digest",
        "grant_1",
        "alice",
        "client-a",
        "http://127.0.0.1:1/cb",
        True,
        "c" * 43,
        EARLIER,
        expires,
        used_at=EARLIER if used else None,
    )


def token(kind: TokenKind, *, expires: datetime = LATER, used: bool = False, revoked: bool = False) -> OAuthToken:
    return OAuthToken(
        "t1",
        kind,
        "digest",
        "grant_1",
        "alice",
        "client-a",
        EARLIER,
        expires,
        used_at=EARLIER if used else None,
        revoked_at=EARLIER if revoked else None,
    )


@pytest.mark.parametrize(
    ("found", "its_grant", "client", "expected"),
    [
        (code(), grant(), "client-a", None),
        (None, grant(), "client-a", Refusal.UNKNOWN),
        (code(), None, "client-a", Refusal.UNKNOWN),
        (code(), grant(), "client-b", Refusal.OTHER_CLIENT),
        (code(used=True), grant(), "client-a", Refusal.REPLAYED),
        (code(used=True, expires=EARLIER), grant(), "client-a", Refusal.REPLAYED),
        (code(), grant(revoked=True), "client-a", Refusal.REVOKED),
        (code(expires=EARLIER), grant(), "client-a", Refusal.EXPIRED),
        (code(expires=NOW), grant(), "client-a", Refusal.EXPIRED),
    ],
)
def test_which_codes_may_be_exchanged(
    found: OAuthCode | None, its_grant: OAuthGrant | None, client: str, expected: Refusal | None
) -> None:
    assert code_refusal(found, its_grant, client, NOW) == expected


@pytest.mark.parametrize(
    ("found", "kind", "client", "its_grant", "expected"),
    [
        (token(TokenKind.ACCESS), TokenKind.ACCESS, None, grant(), None),
        (token(TokenKind.REFRESH), TokenKind.REFRESH, "client-a", grant(), None),
        (token(TokenKind.REFRESH), TokenKind.ACCESS, None, grant(), Refusal.UNKNOWN),
        (token(TokenKind.ACCESS), TokenKind.REFRESH, "client-a", grant(), Refusal.UNKNOWN),
        (None, TokenKind.ACCESS, None, grant(), Refusal.UNKNOWN),
        (token(TokenKind.REFRESH), TokenKind.REFRESH, "client-b", grant(), Refusal.OTHER_CLIENT),
        (token(TokenKind.ACCESS, revoked=True), TokenKind.ACCESS, None, grant(), Refusal.REVOKED),
        (token(TokenKind.ACCESS), TokenKind.ACCESS, None, grant(revoked=True), Refusal.REVOKED),
        (token(TokenKind.REFRESH, used=True), TokenKind.REFRESH, "client-a", grant(), Refusal.REPLAYED),
        (token(TokenKind.ACCESS, used=True), TokenKind.ACCESS, None, grant(), None),
        (token(TokenKind.ACCESS, expires=EARLIER), TokenKind.ACCESS, None, grant(), Refusal.EXPIRED),
        (token(TokenKind.REFRESH, expires=NOW), TokenKind.REFRESH, "client-a", grant(), Refusal.EXPIRED),
    ],
)
def test_which_tokens_are_honoured(
    found: OAuthToken | None, kind: TokenKind, client: str | None, its_grant: OAuthGrant, expected: Refusal | None
) -> None:
    assert token_refusal(found, its_grant, kind, NOW, client_id=client) == expected


@pytest.mark.parametrize(
    "uri",
    [
        "https://app.example.com/oauth/callback",
        "http://127.0.0.1:53682/callback",
        "http://localhost:3000/cb",
        "http://[::1]:8080/cb",
        "cursor://anysphere.cursor-retrieval/oauth/callback",
        "vscode://vscode.github-authentication/did-authenticate",
        "https://app.example.com/cb?tenant=1",
    ],
)
def test_redirect_uris_a_client_may_register(uri: str) -> None:
    assert redirect_uri_problem(uri) is None


@pytest.mark.parametrize(
    ("uri", "why"),
    [
        ("http://app.example.com/cb", "loopback"),
        ("http://10.0.0.5/cb", "loopback"),
        ("https://app.example.com/cb#frag", "fragment"),
        ("javascript:alert(1)", "javascript"),
        ("data:text/html,hi", "data"),
        ("file:///etc/passwd", "file"),
        ("/relative/cb", "absolute"),
        ("https:///no-host", "host"),
        ("https://x.example/" + "a" * 2100, "longer"),
    ],
)
def test_redirect_uris_refused_at_registration(uri: str, why: str) -> None:
    problem = redirect_uri_problem(uri)
    assert problem is not None and why in problem


@pytest.mark.parametrize(
    ("uri", "source"),
    [
        ("http://127.0.0.1:53682/callback?x=1", "http://127.0.0.1:53682"),
        ("https://app.example.com/cb", "https://app.example.com"),
        ("cursor://anysphere.cursor-retrieval/cb", "cursor:"),
    ],
)
def test_the_consent_page_lets_its_form_lead_only_to_the_redirect_uri(uri: str, source: str) -> None:
    assert form_action_source(uri) == source


def test_a_consent_request_survives_signing_and_nothing_else_does() -> None:
    asked = ConsentRequest("client-a", "http://127.0.0.1:1/cb", True, "c" * 43, "st", ("mcp",), "http://x/mcp")
    signed = sign("k" * 32, asked)
    assert unsign("k" * 32, signed) == asked
    assert unsign("other-key-" * 4, signed) is None
    assert unsign("k" * 32, signed[:-2] + ("A" if signed[-2] != "A" else "B") + signed[-1]) is None
    assert unsign("k" * 32, "") is None and unsign("k" * 32, "x" * 9_000) is None
    assert unsign("k" * 32, signed, max_age_s=-1) is None
