"""What the PostgreSQL store checks of the server it connects to: pgvector, and a role that row-level
security binds."""

from __future__ import annotations

import logging
from typing import Any

import psycopg

from zero_memory import errors

log = logging.getLogger(__name__)


def warn_if_policies_bypassed(conn: psycopg.Connection[dict[str, Any]]) -> None:
    """Row-level security binds no superuser and no BYPASSRLS role: say so where an operator looks."""
    row = conn.execute("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user").fetchone()
    if row and (row["rolsuper"] or row["rolbypassrls"]):
        log.warning(
            "connected to PostgreSQL as a %s: row-level security does not apply to it; run the servers as a "
            "role that is neither (docs/deployment.md, Row-level security)",
            "superuser" if row["rolsuper"] else "BYPASSRLS role",
        )


def ensure_pgvector(conn: psycopg.Connection[dict[str, Any]]) -> None:
    row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    if row is None:
        _create_pgvector(conn)
        row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    version = str(row["extversion"]) if row else "?"
    if not supports_iterative_scan(version):
        raise errors.unavailable(
            f"pgvector {version} is too old: zero-memory needs 0.8 or later (filtered HNSW searches); "
            "install it on the server, then run: ALTER EXTENSION vector UPDATE;"
        )


def supports_iterative_scan(version: str) -> bool:
    """pgvector 0.8 brought iterative index scans."""
    parts = [int(p) if p.isdigit() else 0 for p in version.split(".")[:2]]
    return tuple(parts) >= (0, 8)


def _create_pgvector(conn: psycopg.Connection[dict[str, Any]]) -> None:
    try:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.errors.InsufficientPrivilege as exc:
        raise errors.unavailable(
            "the pgvector extension is not installed in this database and this user may not install it; "
            "ask a superuser to run: CREATE EXTENSION vector;"
        ) from exc
    except psycopg.errors.UndefinedFile as exc:
        raise errors.unavailable(
            "the pgvector extension is not available on this PostgreSQL server; install pgvector 0.8 or later"
        ) from exc
