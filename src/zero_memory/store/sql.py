"""The queries both stores share.

Both schemas use the same representations (ISO text timestamps, JSON text,
0/1 booleans), so everything but vector search, full text and locking is one
implementation. SQL here uses ``?`` placeholders; the PostgreSQL adapter
translates them. No query writes a literal percent sign.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from zero_memory.clock import from_text, to_text
from zero_memory.domain.memory import AuthorKind, InvalidationReason, Kind, Memory, Rank, Status
from zero_memory.domain.records import (
    AuditEntry,
    Dispute,
    DisputeShape,
    DisputeStatus,
    Link,
    Membership,
    Project,
    Run,
    RunStatus,
    User,
)
from zero_memory.domain.scopes import Role
from zero_memory.ids import new_id
from zero_memory.store.base import SYSTEM, DisputeQuery, Judgement, Neighbour, PortabilityCandidate, Reader

AUDIT_STRING_CAP = 500
AUDIT_ROW_CAP = 8_192

MEMORY_COLUMNS = (
    "id, owner, scope, kind, content, content_hash, author_kind, agent_name, rank, source, "
    "created_at, updated_at, status, superseded_by, invalidated_reason, original_scope, session_key"
)



@dataclass(frozen=True, slots=True)
class CopiedTable:
    """A table a whole-installation copy moves: its paging key and the columns both schemas share."""

    name: str
    key: tuple[str, ...]
    columns: tuple[str, ...]


def _table(name: str, key: str, columns: str) -> CopiedTable:
    return CopiedTable(name, tuple(key.split(", ")), tuple(columns.split(", ")))


# Every table of an installation, parents before children (the foreign keys),
# for ``zm db copy``; the only table names copy_rows, insert_rows and count_rows
# accept. Left out on purpose: schema_migrations (each store migrates itself),
# SQLite's locks, counters, rev column and FTS tables (the triggers rebuild
# them as rows arrive), PostgreSQL's generated content_tsv.
COPY_TABLES: dict[str, CopiedTable] = {
    t.name: t
    for t in (
        _table("users", "id", "id, display_name, created_at, is_local"),
        _table("tokens", "id", "id, user_id, token_hash, created_at, revoked_at"),
        _table("provider_keys", "user_id, provider", "user_id, provider, ciphertext, updated_at"),
        _table("projects", "scope", "scope, owner, kind, slug, path, remote, created_at"),
        _table("memberships", "scope, user_id", "scope, user_id, role, created_at"),
        _table("sessions", "owner, session_id", "owner, session_id, attached_scope, created_at"),
        _table("memories", "seq", f"seq, {MEMORY_COLUMNS}, embedding, embedding_model, embedding_dim"),
        _table("links", "id", "id, src, dst, type, created_at, created_by, run_id, removed_at"),
        _table("audit", "seq", "seq, at, actor, action, owner, memory_ids, payload, run_id"),
        _table("audit_memories", "memory_id, audit_seq", "audit_seq, memory_id"),
        _table(
            "disputes",
            "id",
            "id, owner, shape, verdict, direction, confidence, rationale, model, origin, status, memory_a, "
            "memory_b, pair_key, reason, run_id, created_at, resolved_at, resolved_by, resolution",
        ),
        _table("judgements", "pair_key, model", "pair_key, model, verdict, confidence, rationale, created_at"),
        _table(
            "runs",
            "id",
            "id, owner, kind, status, dry_run, started_by, started_at, finished_at, heartbeat_at, summary",
        ),
        _table(
            "usage_ledger",
            "seq",
            "seq, at, owner, model, purpose, input_tokens, output_tokens, latency_ms, outcome, run_id",
        ),
        _table("usage_events", "seq", "seq, at, user_id, tool, client, outcome, declared_supersede"),
        _table("surfacings", "seq", "seq, at, memory_id, user_id"),
        _table("rescan_guards", "memory_id, model", "memory_id, model, created_at, outcome"),
        _table(
            "portability_candidates",
            "id",
            "id, memory_id, owner, status, confidence, rationale, model, original_scope, run_id, created_at, "
            "resolved_at, resolved_by",
        ),
    )
}

# Tables whose ``seq`` the database generates: a copy keeps the source's values.
SEQUENCED_TABLES = tuple(name for name, t in COPY_TABLES.items() if "seq" in t.columns)

# Bound parameters per INSERT of copied rows, under SQLite's historical limit of 999.
MAX_INSERT_PARAMS = 900


def copied_table(name: str) -> CopiedTable:
    """The whitelisted table of that name; any other name is refused before it reaches SQL."""
    table = COPY_TABLES.get(name)
    if table is None:
        raise ValueError(f"not a copied table: {name[:60]!r}")
    return table


def marks(n: int) -> str:
    return ", ".join("?" * n)


def cap_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """Audit payload strings are capped at 500 characters each and 8 KB a row."""

    def cap(value: Any) -> Any:
        if isinstance(value, str):
            return value if len(value) <= AUDIT_STRING_CAP else value[: AUDIT_STRING_CAP - 1] + "…"
        if isinstance(value, dict):
            return {str(k): cap(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [cap(v) for v in value]
        return value

    capped = cap(payload)
    if len(json.dumps(capped)) > AUDIT_ROW_CAP:
        capped = {k: v for k, v in capped.items() if not isinstance(v, list | dict)}
        capped["truncated"] = True
    return capped


def memory_from_row(row: dict[str, Any]) -> Memory:
    return Memory(
        id=row["id"],
        owner=row["owner"],
        scope=row["scope"],
        kind=Kind(row["kind"]),
        content=row["content"],
        content_hash=row["content_hash"],
        author_kind=AuthorKind(row["author_kind"]),
        agent_name=row["agent_name"],
        rank=Rank(row["rank"]),
        source=json.loads(row["source"]),
        created_at=from_text(row["created_at"]),
        updated_at=from_text(row["updated_at"]),
        status=Status(row["status"]),
        superseded_by=row["superseded_by"],
        invalidated_reason=InvalidationReason(row["invalidated_reason"]) if row["invalidated_reason"] else None,
        original_scope=row["original_scope"],
    )


def _dt(value: str | None) -> datetime | None:
    return from_text(value) if value else None


def dispute_from_row(row: dict[str, Any]) -> Dispute:
    return Dispute(
        id=row["id"],
        owner=row["owner"],
        shape=DisputeShape(row["shape"]),
        verdict=row["verdict"],
        origin=row["origin"],
        status=DisputeStatus(row["status"]),
        memory_a=row["memory_a"],
        memory_b=row["memory_b"],
        direction=row["direction"],
        confidence=row["confidence"],
        rationale=row["rationale"],
        model=row["model"],
        pair_key=row["pair_key"],
        reason=row["reason"],
        run_id=row["run_id"],
        created_at=from_text(row["created_at"]),
        resolved_at=_dt(row["resolved_at"]),
        resolved_by=row["resolved_by"],
        resolution=json.loads(row["resolution"]) if row["resolution"] else {},
    )


def link_from_row(row: dict[str, Any]) -> Link:
    return Link(
        id=row["id"],
        src=row["src"],
        dst=row["dst"],
        type=row["type"],
        created_at=from_text(row["created_at"]),
        created_by=row["created_by"],
        run_id=row["run_id"],
        removed_at=_dt(row["removed_at"]),
    )


def audit_from_row(row: dict[str, Any]) -> AuditEntry:
    return AuditEntry(
        seq=row["seq"],
        at=from_text(row["at"]),
        actor=row["actor"],
        action=row["action"],
        owner=row["owner"],
        memory_ids=json.loads(row["memory_ids"]),
        payload=json.loads(row["payload"]),
        run_id=row["run_id"],
    )


def run_from_row(row: dict[str, Any]) -> Run:
    return Run(
        id=row["id"],
        owner=row["owner"],
        kind=row["kind"],
        status=RunStatus(row["status"]),
        dry_run=bool(row["dry_run"]),
        started_by=row["started_by"],
        started_at=from_text(row["started_at"]),
        finished_at=_dt(row["finished_at"]),
        summary=json.loads(row["summary"]),
    )


def project_from_row(row: dict[str, Any]) -> Project:
    return Project(
        scope=row["scope"],
        owner=row["owner"],
        kind=row["kind"],
        slug=row["slug"],
        path=row["path"],
        remote=row["remote"],
        created_at=from_text(row["created_at"]),
    )


class SqlTx:
    """Everything both stores do with the same SQL. Adapters supply the hooks."""

    # -- hooks ---------------------------------------------------------------

    def _exec(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run a statement; return the number of rows it changed."""
        raise NotImplementedError

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        raise NotImplementedError

    def _embedding_param(self, vector: np.ndarray) -> Any:
        raise NotImplementedError

    def _vector_from_value(self, value: Any) -> np.ndarray:
        raise NotImplementedError

    def similar(
        self,
        vector: np.ndarray,
        *,
        floor: float,
        limit: int,
        scopes: Collection[str] | None = None,
        owner: str | None = None,
        exclude: Collection[str] = (),
    ) -> list[Neighbour]:
        raise NotImplementedError

    def fulltext(self, query: str, *, scopes: Collection[str], limit: int) -> list[str]:
        raise NotImplementedError

    def similar_many(
        self, vectors: np.ndarray, *, floor: float, limit: int, owner: str, excludes: list[Collection[str]]
    ) -> list[list[Neighbour]]:
        """Neighbours of several vectors; adapters with a faster batched search override it."""
        return [
            self.similar(vector, floor=floor, limit=limit, owner=owner, exclude=exclude)
            for vector, exclude in zip(vectors, excludes, strict=True)
        ]

    # -- users, tokens, keys -------------------------------------------------

    def add_user(self, user: User) -> None:
        self._exec(
            "INSERT INTO users(id, display_name, created_at, is_local) VALUES (?, ?, ?, ?)",
            (user.id, user.display_name, to_text(user.created_at), int(user.is_local)),
        )

    def get_user(self, uid: str) -> User | None:
        rows = self._query("SELECT * FROM users WHERE id = ?", (uid,))
        return _user(rows[0]) if rows else None

    def list_users(self) -> list[User]:
        return [_user(r) for r in self._query("SELECT * FROM users ORDER BY created_at, id")]

    def add_token(self, token_id: str, user_id: str, token_hash: str, at: datetime) -> None:
        self._exec(
            "INSERT INTO tokens(id, user_id, token_hash, created_at) VALUES (?, ?, ?, ?)",
            (token_id, user_id, token_hash, to_text(at)),
        )

    def get_token(self, token_id: str) -> tuple[str, str] | None:
        rows = self._query(
            "SELECT user_id, token_hash FROM tokens WHERE id = ? AND revoked_at IS NULL", (token_id,)
        )
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
        rows = self._query("SELECT scope, user_id, role FROM memberships WHERE user_id = ?", (user_id,))
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

    # -- memories ---------------------------------------------------------------

    def insert_memory(self, memory: Memory, vector: np.ndarray, model: str) -> None:
        session_key = ",".join(sorted(memory.session_keys)) or None
        self._exec(
            f"INSERT INTO memories({MEMORY_COLUMNS}, embedding, embedding_model, embedding_dim) "
            f"VALUES ({marks(20)})",
            (
                memory.id,
                memory.owner,
                memory.scope,
                memory.kind.value,
                memory.content,
                memory.content_hash,
                memory.author_kind.value,
                memory.agent_name,
                int(memory.rank),
                json.dumps(memory.source, sort_keys=True),
                to_text(memory.created_at),
                to_text(memory.updated_at),
                memory.status.value,
                memory.superseded_by,
                memory.invalidated_reason.value if memory.invalidated_reason else None,
                memory.original_scope,
                session_key,
                self._embedding_param(vector),
                model,
                int(vector.shape[0]),
            ),
        )

    def get_memory(self, memory_id: str, reader: Reader) -> Memory | None:
        found = self.get_memories([memory_id], reader)
        return found.get(memory_id)

    def get_memories(self, ids: Collection[str], reader: Reader) -> dict[str, Memory]:
        """Memories by id that the reader may see; others are absent, exactly like missing ids.

        Visibility is applied to the rows fetched by id (a scope condition in SQL
        would lead the planner onto the scope index and scan a whole scope).
        """
        ids = list(dict.fromkeys(ids))
        found: dict[str, Memory] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            rows = self._query(f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id IN ({marks(len(chunk))})", chunk)
            for row in rows:
                if reader is SYSTEM or row["scope"] in reader.readable:  # type: ignore[union-attr]
                    found[row["id"]] = memory_from_row(row)
        return found

    def find_live_by_hash(self, owner: str, scope: str, content_hash: str) -> Memory | None:
        rows = self._query(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE owner = ? AND content_hash = ? AND scope = ? "
            "AND status = 'live' ORDER BY created_at LIMIT 1",
            (owner, content_hash, scope),
        )
        return memory_from_row(rows[0]) if rows else None

    def find_by_hash(self, owner: str, content_hash: str) -> list[Memory]:
        rows = self._query(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE owner = ? AND content_hash = ? ORDER BY created_at",
            (owner, content_hash),
        )
        return [memory_from_row(r) for r in rows]

    def set_status(
        self,
        memory_id: str,
        status: Status,
        reason: InvalidationReason | None,
        superseded_by: str | None,
        at: datetime,
    ) -> None:
        self._exec(
            "UPDATE memories SET status = ?, invalidated_reason = ?, superseded_by = ?, updated_at = ? WHERE id = ?",
            (status.value, reason.value if reason else None, superseded_by, to_text(at), memory_id),
        )

    def set_scope(self, memory_id: str, scope: str, original_scope: str | None, at: datetime) -> None:
        self._exec(
            "UPDATE memories SET scope = ?, original_scope = ?, updated_at = ? WHERE id = ?",
            (scope, original_scope, to_text(at), memory_id),
        )

    def memory_vector(self, memory_id: str) -> np.ndarray | None:
        rows = self._query("SELECT embedding FROM memories WHERE id = ?", (memory_id,))
        if not rows or rows[0]["embedding"] is None:
            return None
        return self._vector_from_value(rows[0]["embedding"])

    def memory_vectors(self, memory_ids: Collection[str]) -> dict[str, np.ndarray]:
        ids = list(dict.fromkeys(memory_ids))
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            rows = self._query(f"SELECT id, embedding FROM memories WHERE id IN ({marks(len(chunk))})", chunk)
            for row in rows:
                if row["embedding"] is not None:
                    found[row["id"]] = self._vector_from_value(row["embedding"])
        return found

    def update_embedding(self, memory_id: str, vector: np.ndarray, model: str) -> None:
        self._exec(
            "UPDATE memories SET embedding = ?, embedding_model = ?, embedding_dim = ? WHERE id = ?",
            (self._embedding_param(vector), model, int(vector.shape[0]), memory_id),
        )

    def live_memories(
        self,
        *,
        owner: str | None = None,
        since: datetime | None = None,
        after: tuple[datetime, str] | None = None,
        kinds: Collection[str] | None = None,
        scope_prefix: str | None = None,
        limit: int = 1000,
        newest_first: bool = False,
    ) -> list[Memory]:
        where = ["status = 'live'"]
        params: list[Any] = []
        if owner is not None:
            where.append("owner = ?")
            params.append(owner)
        if since is not None:
            where.append("(created_at >= ? OR updated_at >= ?)")
            params += [to_text(since), to_text(since)]
        if after is not None:
            where.append("(created_at > ? OR (created_at = ? AND id > ?))")
            params += [to_text(after[0]), to_text(after[0]), after[1]]
        if kinds:
            kinds = list(kinds)
            where.append(f"kind IN ({marks(len(kinds))})")
            params += kinds
        if scope_prefix is not None:
            where.append("substr(scope, 1, ?) = ?")
            params += [len(scope_prefix), scope_prefix]
        order = "DESC" if newest_first else "ASC"
        rows = self._query(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {' AND '.join(where)} "
            f"ORDER BY created_at {order}, id {order} LIMIT ?",
            [*params, limit],
        )
        return [memory_from_row(r) for r in rows]

    def iter_memories(self, *, batch: int = 500) -> Iterator[Memory]:
        last = ""
        while True:
            rows = self._query(
                f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id > ? ORDER BY id LIMIT ?", (last, batch)
            )
            if not rows:
                return
            for row in rows:
                yield memory_from_row(row)
            last = rows[-1]["id"]

    def count_memories(self, *, owner: str | None = None, status: Status | None = None) -> int:
        where, params = ["1 = 1"], []
        if owner is not None:
            where.append("owner = ?")
            params.append(owner)
        if status is not None:
            where.append("status = ?")
            params.append(status.value)
        rows = self._query(f"SELECT count(*) AS n FROM memories WHERE {' AND '.join(where)}", params)
        return int(rows[0]["n"])

    def embedding_models(self) -> dict[str, int]:
        rows = self._query(
            "SELECT coalesce(embedding_model, '') AS model, count(*) AS n FROM memories GROUP BY embedding_model"
        )
        return {r["model"]: int(r["n"]) for r in rows}

    def texts_to_embed(self, *, unless_model: str | None, after: str, limit: int) -> list[tuple[str, str]]:
        """(id, content) of memories after an id whose vector is not from ``unless_model`` (None: all)."""
        if unless_model is None:
            rows = self._query("SELECT id, content FROM memories WHERE id > ? ORDER BY id LIMIT ?", (after, limit))
        else:
            rows = self._query(
                "SELECT id, content FROM memories WHERE id > ? AND (embedding_model IS NULL OR embedding_model <> ?) "
                "ORDER BY id LIMIT ?",
                (after, unless_model, limit),
            )
        return [(r["id"], r["content"]) for r in rows]

    # -- links --------------------------------------------------------------------

    def add_link(self, link: Link) -> None:
        self._exec(
            "INSERT INTO links(id, src, dst, type, created_at, created_by, run_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (link.id, link.src, link.dst, link.type, to_text(link.created_at), link.created_by, link.run_id),
        )

    def links_of(self, memory_id: str) -> list[Link]:
        rows = self._query(
            "SELECT * FROM links WHERE (src = ? OR dst = ?) AND removed_at IS NULL ORDER BY created_at, id",
            (memory_id, memory_id),
        )
        return [link_from_row(r) for r in rows]

    def has_link(self, a: str, b: str, link_type: str) -> bool:
        rows = self._query(
            "SELECT 1 AS x FROM links WHERE type = ? AND removed_at IS NULL AND "
            "((src = ? AND dst = ?) OR (src = ? AND dst = ?)) LIMIT 1",
            (link_type, a, b, b, a),
        )
        return bool(rows)

    def remove_links(self, *, dst: str, link_type: str, at: datetime) -> list[Link]:
        rows = self._query(
            "SELECT * FROM links WHERE dst = ? AND type = ? AND removed_at IS NULL", (dst, link_type)
        )
        if rows:
            self._exec(
                "UPDATE links SET removed_at = ? WHERE dst = ? AND type = ? AND removed_at IS NULL",
                (to_text(at), dst, link_type),
            )
        return [link_from_row(r) for r in rows]

    def links_of_run(self, run_id: str) -> list[Link]:
        rows = self._query(
            "SELECT * FROM links WHERE run_id = ? AND removed_at IS NULL ORDER BY created_at, id", (run_id,)
        )
        return [link_from_row(r) for r in rows]

    def remove_link(self, link_id: str, at: datetime) -> None:
        self._exec("UPDATE links SET removed_at = ? WHERE id = ? AND removed_at IS NULL", (to_text(at), link_id))

    # -- audit ----------------------------------------------------------------------

    def add_audit(
        self,
        *,
        actor: str,
        action: str,
        owner: str | None,
        memory_ids: Sequence[str],
        payload: dict[str, Any],
        run_id: str | None,
        at: datetime,
    ) -> int:
        rows = self._query(
            "INSERT INTO audit(at, actor, action, owner, memory_ids, payload, run_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING seq",
            (
                to_text(at),
                actor,
                action,
                owner,
                json.dumps(list(memory_ids)),
                json.dumps(cap_payload(payload), sort_keys=True),
                run_id,
            ),
        )
        seq = int(rows[0]["seq"])
        for memory_id in dict.fromkeys(memory_ids):
            self._exec("INSERT INTO audit_memories(audit_seq, memory_id) VALUES (?, ?)", (seq, memory_id))
        return seq

    def audit_for_memory(self, memory_id: str, *, limit: int = 200) -> list[AuditEntry]:
        rows = self._query(
            "SELECT a.* FROM audit a JOIN audit_memories m ON m.audit_seq = a.seq "
            "WHERE m.memory_id = ? ORDER BY a.seq LIMIT ?",
            (memory_id, limit),
        )
        return [audit_from_row(r) for r in rows]

    def audit_for_run(self, run_id: str) -> list[AuditEntry]:
        rows = self._query("SELECT * FROM audit WHERE run_id = ? ORDER BY seq", (run_id,))
        return [audit_from_row(r) for r in rows]

    def audit_actions(self, action: str, *, since: datetime | None = None) -> list[AuditEntry]:
        rows = self._query(
            "SELECT * FROM audit WHERE action = ? AND at >= ? ORDER BY seq",
            (action, to_text(since) if since else ""),
        )
        return [audit_from_row(r) for r in rows]

    # -- review queue -----------------------------------------------------------------

    def add_dispute(self, dispute: Dispute) -> bool:
        changed = self._exec(
            "INSERT INTO disputes(id, owner, shape, verdict, direction, confidence, rationale, model, origin, "
            "status, memory_a, memory_b, pair_key, reason, run_id, created_at, resolved_at, resolved_by, resolution) "
            f"VALUES ({marks(19)}) ON CONFLICT DO NOTHING",
            (
                dispute.id,
                dispute.owner,
                dispute.shape.value,
                dispute.verdict,
                dispute.direction,
                dispute.confidence,
                dispute.rationale,
                dispute.model,
                dispute.origin,
                dispute.status.value,
                dispute.memory_a,
                dispute.memory_b,
                dispute.pair_key,
                dispute.reason,
                dispute.run_id,
                to_text(dispute.created_at),
                to_text(dispute.resolved_at) if dispute.resolved_at else None,
                dispute.resolved_by,
                json.dumps(dispute.resolution) if dispute.resolution else None,
            ),
        )
        return changed > 0

    def get_dispute(self, dispute_id: str) -> Dispute | None:
        rows = self._query("SELECT * FROM disputes WHERE id = ?", (dispute_id,))
        return dispute_from_row(rows[0]) if rows else None

    def dispute_for_pair(self, pair_key: str) -> Dispute | None:
        rows = self._query("SELECT * FROM disputes WHERE pair_key = ?", (pair_key,))
        return dispute_from_row(rows[0]) if rows else None

    def _dispute_where(self, query: DisputeQuery) -> tuple[str, list[Any]]:
        where, params = ["1 = 1"], []
        if query.owner is not None:
            where.append("owner = ?")
            params.append(query.owner)
        if query.status is not None:
            where.append("status = ?")
            params.append(query.status.value)
        if query.verdict is not None:
            where.append("verdict = ?")
            params.append(query.verdict)
        if query.shape is not None:
            where.append("shape = ?")
            params.append(query.shape)
        if query.origin is not None:
            where.append("origin = ?")
            params.append(query.origin)
        if query.scopes is not None:
            scopes = sorted(query.scopes)
            if not scopes:
                return "1 = 0", []
            ph = marks(len(scopes))
            # Both sides must be readable: a row about a memory you cannot see is not yours to see.
            where.append(
                f"memory_a IN (SELECT id FROM memories WHERE scope IN ({ph})) AND "
                f"(memory_b IS NULL OR memory_b IN (SELECT id FROM memories WHERE scope IN ({ph})))"
            )
            params += scopes + scopes
        return " AND ".join(where), params

    def list_disputes(self, query: DisputeQuery) -> list[Dispute]:
        where, params = self._dispute_where(query)
        if query.after is not None:
            where += " AND id > ?"
            params.append(query.after)
        rows = self._query(f"SELECT * FROM disputes WHERE {where} ORDER BY id LIMIT ?", [*params, query.limit])
        return [dispute_from_row(r) for r in rows]

    def count_disputes(self, query: DisputeQuery) -> int:
        where, params = self._dispute_where(query)
        return int(self._query(f"SELECT count(*) AS n FROM disputes WHERE {where}", params)[0]["n"])

    def open_disputes_for(self, memory_ids: Collection[str]) -> list[Dispute]:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return []
        found: dict[str, Dispute] = {}
        for start in range(0, len(ids), 400):
            chunk = ids[start : start + 400]
            ph = marks(len(chunk))
            rows = self._query(
                f"SELECT * FROM disputes WHERE status = 'pending' AND (memory_a IN ({ph}) OR memory_b IN ({ph}))",
                [*chunk, *chunk],
            )
            for row in rows:
                found[row["id"]] = dispute_from_row(row)
        return sorted(found.values(), key=lambda d: d.id)

    def settle_dispute(
        self, dispute_id: str, status: DisputeStatus, resolution: dict[str, Any], by: str, at: datetime
    ) -> bool:
        changed = self._exec(
            "UPDATE disputes SET status = ?, resolution = ?, resolved_by = ?, resolved_at = ? "
            "WHERE id = ? AND status = 'pending'",
            (status.value, json.dumps(resolution), by, to_text(at), dispute_id),
        )
        return changed > 0

    # -- judgement cache -------------------------------------------------------------------

    def get_judgement(self, pair_key: str, model: str) -> Judgement | None:
        rows = self._query("SELECT * FROM judgements WHERE pair_key = ? AND model = ?", (pair_key, model))
        if not rows:
            return None
        r = rows[0]
        return Judgement(r["verdict"], float(r["confidence"]), r["rationale"], r["model"])

    def put_judgement(self, pair_key: str, judgement: Judgement, at: datetime) -> None:
        self._exec(
            "INSERT INTO judgements(pair_key, model, verdict, confidence, rationale, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (pair_key, model) DO UPDATE SET verdict = excluded.verdict, "
            "confidence = excluded.confidence, rationale = excluded.rationale, created_at = excluded.created_at",
            (pair_key, judgement.model, judgement.verdict, judgement.confidence, judgement.rationale, to_text(at)),
        )

    # -- runs ----------------------------------------------------------------------------------

    def add_run(self, run: Run) -> None:
        self._exec(
            "INSERT INTO runs(id, owner, kind, status, dry_run, started_by, started_at, heartbeat_at, summary) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run.id,
                run.owner,
                run.kind,
                run.status.value,
                int(run.dry_run),
                run.started_by,
                to_text(run.started_at),
                to_text(run.started_at),
                json.dumps(run.summary),
            ),
        )

    def claim_run(self, run: Run) -> bool:
        """Insert a run unless one with its id exists; whoever inserts it owns it."""
        changed = self._exec(
            "INSERT INTO runs(id, owner, kind, status, dry_run, started_by, started_at, heartbeat_at, summary) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (
                run.id,
                run.owner,
                run.kind,
                run.status.value,
                int(run.dry_run),
                run.started_by,
                to_text(run.started_at),
                to_text(run.started_at),
                json.dumps(run.summary),
            ),
        )
        return changed > 0

    def touch_run(self, run_id: str, summary: dict[str, Any], at: datetime) -> None:
        self._exec(
            "UPDATE runs SET heartbeat_at = ?, summary = ? WHERE id = ? AND status = 'running'",
            (to_text(at), json.dumps(summary, sort_keys=True), run_id),
        )

    def interrupt_runs(self, *, heartbeat_before: datetime, at: datetime) -> list[str]:
        """Mark running runs whose process stopped beating as interrupted; return their ids."""
        rows = self._query(
            "SELECT id FROM runs WHERE status = 'running' AND heartbeat_at < ? ORDER BY id",
            (to_text(heartbeat_before),),
        )
        ids = [r["id"] for r in rows]
        for run_id in ids:
            self._exec(
                "UPDATE runs SET status = 'interrupted', finished_at = ? WHERE id = ? AND status = 'running'",
                (to_text(at), run_id),
            )
        return ids

    def finish_run(self, run_id: str, status: RunStatus, summary: dict[str, Any], at: datetime) -> None:
        self._exec(
            "UPDATE runs SET status = ?, summary = ?, finished_at = ? WHERE id = ?",
            (status.value, json.dumps(summary, sort_keys=True), to_text(at), run_id),
        )

    def get_run(self, run_id: str) -> Run | None:
        rows = self._query("SELECT * FROM runs WHERE id = ?", (run_id,))
        return run_from_row(rows[0]) if rows else None

    def list_runs(self, *, owner: str | None = None, limit: int = 50) -> list[Run]:
        if owner is None:
            rows = self._query("SELECT * FROM runs ORDER BY started_at DESC, id DESC LIMIT ?", (limit,))
        else:
            rows = self._query(
                "SELECT * FROM runs WHERE owner = ? ORDER BY started_at DESC, id DESC LIMIT ?", (owner, limit)
            )
        return [run_from_row(r) for r in rows]

    def runs_with_status(self, status: RunStatus) -> list[Run]:
        rows = self._query("SELECT * FROM runs WHERE status = ? ORDER BY started_at", (status.value,))
        return [run_from_row(r) for r in rows]

    # -- re-examination guards and portability candidacies ---------------------------------

    def guarded(self, memory_ids: Collection[str], model: str) -> set[str]:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return set()
        rows = self._query(
            f"SELECT memory_id FROM rescan_guards WHERE model = ? AND memory_id IN ({marks(len(ids))})", [model, *ids]
        )
        return {r["memory_id"] for r in rows}

    def add_guard(self, memory_id: str, model: str, outcome: str, at: datetime) -> None:
        self._exec(
            "INSERT INTO rescan_guards(memory_id, model, created_at, outcome) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (memory_id, model) DO NOTHING",
            (memory_id, model, to_text(at), outcome),
        )

    def add_portability(self, candidate: PortabilityCandidate) -> bool:
        """Record a candidacy; False when the memory was a candidate before (once ever)."""
        changed = self._exec(
            "INSERT INTO portability_candidates(id, memory_id, owner, status, confidence, rationale, model, "
            "original_scope, run_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (
                candidate.id,
                candidate.memory_id,
                candidate.owner,
                candidate.status,
                candidate.confidence,
                candidate.rationale,
                candidate.model,
                candidate.original_scope,
                candidate.run_id,
                to_text(candidate.created_at),
            ),
        )
        return changed > 0

    def get_portability(self, candidate_id: str) -> PortabilityCandidate | None:
        rows = self._query("SELECT * FROM portability_candidates WHERE id = ?", (candidate_id,))
        return _portability(rows[0]) if rows else None

    def portability_of(self, memory_ids: Collection[str]) -> set[str]:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return set()
        rows = self._query(
            f"SELECT memory_id FROM portability_candidates WHERE memory_id IN ({marks(len(ids))})", ids
        )
        return {r["memory_id"] for r in rows}

    def list_portability(self, *, owner: str, status: str | None, limit: int = 100) -> list[PortabilityCandidate]:
        if status is None:
            rows = self._query(
                "SELECT * FROM portability_candidates WHERE owner = ? ORDER BY id LIMIT ?", (owner, limit)
            )
        else:
            rows = self._query(
                "SELECT * FROM portability_candidates WHERE owner = ? AND status = ? ORDER BY id LIMIT ?",
                (owner, status, limit),
            )
        return [_portability(r) for r in rows]

    def settle_portability(self, candidate_id: str, status: str, by: str, at: datetime) -> bool:
        changed = self._exec(
            "UPDATE portability_candidates SET status = ?, resolved_by = ?, resolved_at = ? "
            "WHERE id = ? AND status = 'pending'",
            (status, by, to_text(at), candidate_id),
        )
        return changed > 0

    # -- usage -------------------------------------------------------------------------------------

    def add_ledger(
        self,
        *,
        owner: str,
        model: str,
        purpose: str,
        input_tokens: int,
        output_tokens: int,
        latency_ms: int,
        outcome: str,
        run_id: str | None,
        at: datetime,
    ) -> None:
        self._exec(
            "INSERT INTO usage_ledger(at, owner, model, purpose, input_tokens, output_tokens, latency_ms, outcome, "
            "run_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (to_text(at), owner, model, purpose, input_tokens, output_tokens, latency_ms, outcome, run_id),
        )

    def ledger(self, *, owner: str | None = None, run_id: str | None = None) -> list[dict[str, Any]]:
        where, params = ["1 = 1"], []
        if owner is not None:
            where.append("owner = ?")
            params.append(owner)
        if run_id is not None:
            where.append("run_id = ?")
            params.append(run_id)
        return self._query(f"SELECT * FROM usage_ledger WHERE {' AND '.join(where)} ORDER BY seq", params)

    def add_usage_event(
        self, *, user_id: str, tool: str, client: str, outcome: str, declared_supersede: bool, at: datetime
    ) -> None:
        self._exec(
            "INSERT INTO usage_events(at, user_id, tool, client, outcome, declared_supersede) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (to_text(at), user_id, tool, client, outcome, int(declared_supersede)),
        )

    def usage_events(self, *, tool: str | None = None, since: datetime | None = None) -> list[dict[str, Any]]:
        where, params = ["at >= ?"], [to_text(since) if since else ""]
        if tool is not None:
            where.append("tool = ?")
            params.append(tool)
        return self._query(f"SELECT * FROM usage_events WHERE {' AND '.join(where)} ORDER BY seq", params)

    def add_surfacings(self, user_id: str, memory_ids: Sequence[str], at: datetime) -> None:
        for memory_id in memory_ids:
            self._exec(
                "INSERT INTO surfacings(at, memory_id, user_id) VALUES (?, ?, ?)", (to_text(at), memory_id, user_id)
            )

    def surfacing_counts(self, *, since: datetime, min_count: int) -> list[tuple[str, int]]:
        rows = self._query(
            "SELECT memory_id, count(*) AS n FROM surfacings WHERE at >= ? GROUP BY memory_id "
            "HAVING count(*) >= ? ORDER BY count(*) DESC, memory_id",
            (to_text(since), min_count),
        )
        return [(r["memory_id"], int(r["n"])) for r in rows]

    def surfacings_of(self, memory_ids: Collection[str], *, since: datetime) -> dict[str, int]:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return {}
        rows = self._query(
            f"SELECT memory_id, count(*) AS n FROM surfacings WHERE at >= ? AND memory_id IN ({marks(len(ids))}) "
            "GROUP BY memory_id",
            [to_text(since), *ids],
        )
        return {r["memory_id"]: int(r["n"]) for r in rows}


    # -- whole-table copies (zm db copy) -------------------------------------------------------------

    def copy_rows(self, table: str, after: Sequence[Any] | None, limit: int) -> list[dict[str, Any]]:
        """Up to ``limit`` whole rows in key order, after the row whose key is ``after`` (None: from the start).

        Values come back as stored (ISO text, JSON text, 0/1), except ``embedding``:
        a float32 array (or None) whichever backend it came from.
        """
        spec = copied_table(table)
        key = ", ".join(spec.key)
        where, params = "", []
        if after is not None:
            where = f"WHERE ({key}) > ({marks(len(spec.key))})"
            params = list(after)
        rows = self._query(
            f"SELECT {', '.join(spec.columns)} FROM {spec.name} {where} ORDER BY {key} LIMIT ?", [*params, limit]
        )
        if "embedding" in spec.columns:
            for row in rows:
                if row["embedding"] is not None:
                    row["embedding"] = self._vector_from_value(row["embedding"])
        return rows

    def insert_rows(self, table: str, rows: Sequence[dict[str, Any]]) -> None:
        """Insert rows as ``copy_rows`` returned them, every column as given (``seq`` included)."""
        spec = copied_table(table)
        if not rows:
            return
        columns = ", ".join(spec.columns)
        one = f"({marks(len(spec.columns))})"
        per_statement = max(1, MAX_INSERT_PARAMS // len(spec.columns))
        for start in range(0, len(rows), per_statement):
            chunk = rows[start : start + per_statement]
            params: list[Any] = []
            for row in chunk:
                for column in spec.columns:
                    value = row[column]
                    if column == "embedding" and value is not None:
                        value = self._embedding_param(np.asarray(value, dtype=np.float32))
                    params.append(value)
            self._exec(f"INSERT INTO {spec.name}({columns}) VALUES {', '.join([one] * len(chunk))}", params)

    def count_rows(self, table: str) -> int:
        spec = copied_table(table)
        return int(self._query(f"SELECT count(*) AS n FROM {spec.name}")[0]["n"])

    def restart_sequences(self) -> None:
        """After rows came in with their own ``seq``, make the next generated one follow the largest.

        SQLite's INTEGER PRIMARY KEY does so by itself; a PostgreSQL identity
        column keeps its own counter, which inserted values do not move.
        """
        if getattr(getattr(self, "store", None), "backend", None) != "postgres":
            return
        for name in SEQUENCED_TABLES:
            self._query(
                f"SELECT setval(pg_get_serial_sequence('{name}', 'seq'), coalesce(max(seq), 0) + 1, false) "
                f"FROM {name}"
            )


def _portability(row: dict[str, Any]) -> PortabilityCandidate:
    return PortabilityCandidate(
        id=row["id"],
        memory_id=row["memory_id"],
        owner=row["owner"],
        status=row["status"],
        original_scope=row["original_scope"],
        created_at=from_text(row["created_at"]),
        confidence=row["confidence"],
        rationale=row["rationale"],
        model=row["model"],
        run_id=row["run_id"],
        resolved_at=_dt(row["resolved_at"]),
        resolved_by=row["resolved_by"],
    )


def _user(row: dict[str, Any]) -> User:
    return User(row["id"], row["display_name"], from_text(row["created_at"]), bool(row["is_local"]))


def new_link_id() -> str:
    return new_id("lnk")
