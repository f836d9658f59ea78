"""Users, tokens, provider keys, projects, membership and sessions."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from zero_memory.clock import to_text
from zero_memory.domain.records import (
    Membership,
    Project,
    User,
)
from zero_memory.domain.scopes import Role
from zero_memory.store.queries.base import SqlBase
from zero_memory.store.rows import marks, project_from_row, user_from_row

# A user's memberships (``memberships_of`` reads the rows).
MEMBERSHIPS = "SELECT scope, user_id, role FROM memberships WHERE user_id = ?"


def memberships_of(rows: Sequence[Any]) -> list[Membership]:
    return [Membership(r["scope"], r["user_id"], Role(r["role"])) for r in rows]


class AccountQueries(SqlBase):
    # -- users, tokens, keys -------------------------------------------------

    def add_user(self, user: User) -> None:
        self._exec(
            "INSERT INTO users(id, display_name, created_at, is_local) VALUES (?, ?, ?, ?)",
            (user.id, user.display_name, to_text(user.created_at), int(user.is_local)),
        )

    def get_user(self, uid: str) -> User | None:
        rows = self._query("SELECT * FROM users WHERE id = ?", (uid,))
        return user_from_row(rows[0]) if rows else None

    def list_users(self) -> list[User]:
        return [user_from_row(r) for r in self._query("SELECT * FROM users ORDER BY created_at, id")]

    def add_token(self, token_id: str, user_id: str, token_hash: str, at: datetime) -> None:
        self._exec(
            "INSERT INTO tokens(id, user_id, token_hash, created_at) VALUES (?, ?, ?, ?)",
            (token_id, user_id, token_hash, to_text(at)),
        )

    def get_token(self, token_id: str) -> tuple[str, str] | None:
        rows = self._query("SELECT user_id, token_hash FROM tokens WHERE id = ? AND revoked_at IS NULL", (token_id,))
        return (rows[0]["user_id"], rows[0]["token_hash"]) if rows else None

    def revoke_tokens(self, user_id: str, at: datetime) -> int:
        return self._exec(
            "UPDATE tokens SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL", (to_text(at), user_id)
        )

    def set_provider_key(self, user_id: str, provider: str, ciphertext: str, at: datetime) -> None:
        self._exec(
            "INSERT INTO provider_keys(user_id, provider, ciphertext, updated_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (user_id, provider) DO UPDATE SET ciphertext = excluded.ciphertext, "
            "updated_at = excluded.updated_at",
            (user_id, provider, ciphertext, to_text(at)),
        )

    def get_provider_key(self, user_id: str, provider: str) -> str | None:
        rows = self._query(
            "SELECT ciphertext FROM provider_keys WHERE user_id = ? AND provider = ?", (user_id, provider)
        )
        return rows[0]["ciphertext"] if rows else None

    def delete_provider_key(self, user_id: str, provider: str) -> bool:
        return self._exec("DELETE FROM provider_keys WHERE user_id = ? AND provider = ?", (user_id, provider)) > 0

    # -- projects, membership, sessions ----------------------------------------

    def add_project(self, project: Project) -> None:
        self._exec(
            "INSERT INTO projects(scope, owner, kind, slug, path, remote, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                project.scope,
                project.owner,
                project.kind,
                project.slug,
                project.path,
                project.remote,
                to_text(project.created_at),
            ),
        )

    def get_project(self, scope: str) -> Project | None:
        rows = self._query("SELECT * FROM projects WHERE scope = ?", (scope,))
        return project_from_row(rows[0]) if rows else None

    def find_projects(
        self, *, path: str | None = None, remote: str | None = None, slug: str | None = None
    ) -> list[Project]:
        if path is not None:
            rows = self._query("SELECT * FROM projects WHERE path = ? ORDER BY created_at", (path,))
        elif remote is not None:
            rows = self._query("SELECT * FROM projects WHERE remote = ? ORDER BY created_at", (remote,))
        elif slug is not None:
            rows = self._query("SELECT * FROM projects WHERE slug = ? ORDER BY created_at", (slug,))
        else:
            rows = []
        return [project_from_row(r) for r in rows]

    def list_projects(self, scopes: Collection[str] | None = None) -> list[Project]:
        if scopes is None:
            rows = self._query("SELECT * FROM projects ORDER BY scope")
        elif not scopes:
            return []
        else:
            scopes = list(scopes)
            rows = self._query(f"SELECT * FROM projects WHERE scope IN ({marks(len(scopes))}) ORDER BY scope", scopes)
        return [project_from_row(r) for r in rows]

    def set_membership(self, scope: str, user_id: str, role: str, at: datetime) -> None:
        self._exec(
            "INSERT INTO memberships(scope, user_id, role, created_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (scope, user_id) DO UPDATE SET role = excluded.role",
            (scope, user_id, role, to_text(at)),
        )

    def memberships(self, user_id: str) -> list[Membership]:
        return memberships_of(self._query(MEMBERSHIPS, (user_id,)))

    def members_of(self, scope: str) -> list[Membership]:
        rows = self._query("SELECT scope, user_id, role FROM memberships WHERE scope = ? ORDER BY user_id", (scope,))
        return [Membership(r["scope"], r["user_id"], Role(r["role"])) for r in rows]

    def get_session(self, owner: str, session_id: str) -> str | None:
        rows = self._query(
            "SELECT attached_scope FROM sessions WHERE owner = ? AND session_id = ?", (owner, session_id)
        )
        return rows[0]["attached_scope"] if rows else None

    def attach_session(self, owner: str, session_id: str, scope: str, at: datetime) -> str:
        """Attach a session to a scope unless it is attached already; return the attached scope."""
        self._exec(
            "INSERT INTO sessions(owner, session_id, attached_scope, created_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (owner, session_id) DO NOTHING",
            (owner, session_id, scope, to_text(at)),
        )
        attached = self.get_session(owner, session_id)
        return attached or scope
