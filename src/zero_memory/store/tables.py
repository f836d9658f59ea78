"""The tables a whole-installation copy moves, with their keys and columns (``zm db copy``)."""

from __future__ import annotations

from dataclasses import dataclass

from zero_memory.store.rows import MEMORY_COLUMNS


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
# SQLite's locks, counters, rev column, memory_removals and FTS tables (the
# triggers rebuild them as rows arrive), PostgreSQL's generated content_tsv.
COPY_TABLES: dict[str, CopiedTable] = {
    t.name: t
    for t in (
        _table("users", "id", "id, display_name, created_at, is_local"),
        _table("tokens", "id", "id, user_id, token_hash, created_at, revoked_at"),
        _table("provider_keys", "user_id, provider", "user_id, provider, ciphertext, updated_at"),
        _table("oauth_clients", "id", "id, name, secret_hash, metadata, created_at"),
        _table("oauth_grants", "id", "id, user_id, client_id, scopes, resource, created_at, last_used_at, revoked_at"),
        _table(
            "oauth_codes",
            "code_hash",
            "code_hash, grant_id, user_id, client_id, redirect_uri, redirect_uri_explicit, code_challenge, "
            "created_at, expires_at, used_at",
        ),
        _table(
            "oauth_tokens",
            "id",
            "id, kind, token_hash, grant_id, user_id, client_id, created_at, expires_at, used_at, revoked_at",
        ),
        _table("projects", "scope", "scope, owner, kind, slug, path, remote, created_at"),
        _table("memberships", "scope, user_id", "scope, user_id, role, created_at"),
        _table("sessions", "owner, session_id", "owner, session_id, attached_scope, created_at"),
        _table("memories", "seq", f"seq, {MEMORY_COLUMNS}, embedding, embedding_model, embedding_dim"),
        _table("pins", "memory_id", "memory_id, pinned_by, pinned_at"),
        _table(
            "memory_anchors",
            "memory_id, path, symbol",
            "memory_id, path, symbol, origin, state, repository, verified_commit, content_hash, verified_at, drift, "
            "observed_path, observed_symbol, observed_hash, created_at",
        ),
        _table("links", "id", "id, src, dst, type, created_at, created_by, run_id, removed_at"),
        _table("audit", "seq", "seq, at, actor, action, owner, memory_ids, payload, run_id"),
        _table("audit_memories", "memory_id, audit_seq", "audit_seq, memory_id"),
        _table(
            "disputes",
            "id",
            "id, owner, shape, verdict, direction, confidence, rationale, model, origin, status, memory_a, "
            "memory_b, pair_key, reason, run_id, created_at, resolved_at, resolved_by, resolution, proposal",
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
        _table("surfacings", "seq", "seq, at, memory_id, user_id, session_id, channel"),
        _table("surfacing_days", "day, memory_id, user_id, channel", "day, memory_id, user_id, channel, count"),
        _table(
            "usage_event_days",
            "day, user_id, tool, client, outcome, declared_supersede",
            "day, user_id, tool, client, outcome, declared_supersede, count",
        ),
        _table("rescan_guards", "memory_id, model", "memory_id, model, created_at, outcome"),
        _table(
            "portability_candidates",
            "id",
            "id, memory_id, owner, status, confidence, rationale, model, original_scope, run_id, created_at, "
            "resolved_at, resolved_by",
        ),
        _table(
            "capture_chunks",
            "id",
            "id, owner, chunk_hash, conversation_id, client, scope, transcript, chars, status, attempts, "
            "next_attempt_at, lease_until, last_error, statements, created, yielded, absorbed, refused, "
            "input_tokens, output_tokens, created_at, updated_at, finished_at",
        ),
        _table("capture_budgets", "user_id", "user_id, daily_tokens, updated_at"),
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
