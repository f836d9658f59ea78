"""OAuth clients, grants, codes and tokens (digests only)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from zero_memory.clock import from_text, to_text
from zero_memory.domain.oauth import OAuthClient, OAuthCode, OAuthGrant, OAuthToken, TokenKind
from zero_memory.store.queries.base import SqlBase


def _dt(value: str | None) -> datetime | None:
    return from_text(value) if value else None


def _grant(row: dict[str, Any]) -> OAuthGrant:
    return OAuthGrant(
        id=row["id"],
        user_id=row["user_id"],
        client_id=row["client_id"],
        scopes=tuple(row["scopes"].split()),
        resource=row["resource"],
        created_at=from_text(row["created_at"]),
        last_used_at=_dt(row["last_used_at"]),
        revoked_at=_dt(row["revoked_at"]),
        client_name=row.get("client_name") or "",
    )


def _token(row: dict[str, Any]) -> OAuthToken:
    return OAuthToken(
        id=row["id"],
        kind=TokenKind(row["kind"]),
        token_hash=row["token_hash"],
        grant_id=row["grant_id"],
        user_id=row["user_id"],
        client_id=row["client_id"],
        created_at=from_text(row["created_at"]),
        expires_at=from_text(row["expires_at"]),
        used_at=_dt(row["used_at"]),
        revoked_at=_dt(row["revoked_at"]),
    )


GRANT_WITH_CLIENT = "SELECT g.*, c.name AS client_name FROM oauth_grants g JOIN oauth_clients c ON c.id = g.client_id"


class OAuthQueries(SqlBase):
    # -- clients ------------------------------------------------------------------

    def add_oauth_client(self, client: OAuthClient) -> None:
        self._exec(
            "INSERT INTO oauth_clients(id, name, secret_hash, metadata, created_at) VALUES (?, ?, ?, ?, ?)",
            (client.id, client.name, client.secret_hash, json.dumps(client.metadata), to_text(client.created_at)),
        )

    def get_oauth_client(self, client_id: str) -> OAuthClient | None:
        rows = self._query("SELECT * FROM oauth_clients WHERE id = ?", (client_id,))
        if not rows:
            return None
        row = rows[0]
        return OAuthClient(
            row["id"], row["name"], row["secret_hash"], json.loads(row["metadata"]), from_text(row["created_at"])
        )

    # -- grants -------------------------------------------------------------------

    def add_oauth_grant(self, grant: OAuthGrant) -> None:
        self._exec(
            "INSERT INTO oauth_grants(id, user_id, client_id, scopes, resource, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (
                grant.id,
                grant.user_id,
                grant.client_id,
                " ".join(grant.scopes),
                grant.resource,
                to_text(grant.created_at),
            ),
        )

    def get_oauth_grant(self, grant_id: str) -> OAuthGrant | None:
        rows = self._query(f"{GRANT_WITH_CLIENT} WHERE g.id = ?", (grant_id,))
        return _grant(rows[0]) if rows else None

    def oauth_grants_of(self, user_id: str, *, live_only: bool = True) -> list[OAuthGrant]:
        live = " AND g.revoked_at IS NULL" if live_only else ""
        rows = self._query(f"{GRANT_WITH_CLIENT} WHERE g.user_id = ?{live} ORDER BY g.created_at, g.id", (user_id,))
        return [_grant(r) for r in rows]

    def touch_oauth_grant(self, grant_id: str, at: datetime) -> None:
        self._exec("UPDATE oauth_grants SET last_used_at = ? WHERE id = ?", (to_text(at), grant_id))

    def revoke_oauth_grant(self, grant_id: str, at: datetime) -> bool:
        """Revoke a grant and every token issued under it; False when it was revoked already."""
        changed = self._exec(
            "UPDATE oauth_grants SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", (to_text(at), grant_id)
        )
        self._exec(
            "UPDATE oauth_tokens SET revoked_at = ? WHERE grant_id = ? AND revoked_at IS NULL", (to_text(at), grant_id)
        )
        return changed > 0

    # -- codes --------------------------------------------------------------------

    def add_oauth_code(self, code: OAuthCode) -> None:
        self._exec(
            "INSERT INTO oauth_codes(code_hash, grant_id, user_id, client_id, redirect_uri, redirect_uri_explicit, "
            "code_challenge, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                code.code_hash,
                code.grant_id,
                code.user_id,
                code.client_id,
                code.redirect_uri,
                int(code.redirect_uri_explicit),
                code.code_challenge,
                to_text(code.created_at),
                to_text(code.expires_at),
            ),
        )

    def get_oauth_code(self, code_hash: str) -> OAuthCode | None:
        rows = self._query("SELECT * FROM oauth_codes WHERE code_hash = ?", (code_hash,))
        if not rows:
            return None
        row = rows[0]
        return OAuthCode(
            code_hash=row["code_hash"],
            grant_id=row["grant_id"],
            user_id=row["user_id"],
            client_id=row["client_id"],
            redirect_uri=row["redirect_uri"],
            redirect_uri_explicit=bool(row["redirect_uri_explicit"]),
            code_challenge=row["code_challenge"],
            created_at=from_text(row["created_at"]),
            expires_at=from_text(row["expires_at"]),
            used_at=_dt(row["used_at"]),
        )

    def use_oauth_code(self, code_hash: str, at: datetime) -> bool:
        """Mark a code used; False when it was used already (the caller lost a race with a replay)."""
        return (
            self._exec(
                "UPDATE oauth_codes SET used_at = ? WHERE code_hash = ? AND used_at IS NULL", (to_text(at), code_hash)
            )
            > 0
        )

    # -- tokens -------------------------------------------------------------------

    def add_oauth_token(self, token: OAuthToken) -> None:
        self._exec(
            "INSERT INTO oauth_tokens(id, kind, token_hash, grant_id, user_id, client_id, created_at, expires_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                token.id,
                token.kind.value,
                token.token_hash,
                token.grant_id,
                token.user_id,
                token.client_id,
                to_text(token.created_at),
                to_text(token.expires_at),
            ),
        )

    def get_oauth_token(self, token_id: str) -> OAuthToken | None:
        rows = self._query("SELECT * FROM oauth_tokens WHERE id = ?", (token_id,))
        return _token(rows[0]) if rows else None

    def use_oauth_token(self, token_id: str, at: datetime) -> bool:
        """Mark a refresh token used (rotated); False when it was used already."""
        return (
            self._exec("UPDATE oauth_tokens SET used_at = ? WHERE id = ? AND used_at IS NULL", (to_text(at), token_id))
            > 0
        )

    def revoke_oauth_token(self, token_id: str, at: datetime) -> bool:
        return (
            self._exec(
                "UPDATE oauth_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", (to_text(at), token_id)
            )
            > 0
        )

    def oauth_tokens_of_grant(self, grant_id: str) -> list[OAuthToken]:
        rows = self._query("SELECT * FROM oauth_tokens WHERE grant_id = ? ORDER BY created_at, id", (grant_id,))
        return [_token(r) for r in rows]

    def delete_oauth_of_user(self, user_id: str) -> int:
        """Remove every grant of a user with its codes and tokens (account deletion); the number of grants.

        Registered clients are not a user's: they stay for the other users who approved them.
        """
        self._exec("DELETE FROM oauth_tokens WHERE user_id = ?", (user_id,))
        self._exec("DELETE FROM oauth_codes WHERE user_id = ?", (user_id,))
        return self._exec("DELETE FROM oauth_grants WHERE user_id = ?", (user_id,))
