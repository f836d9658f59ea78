"""The store port and its two adapters: SQLite (embedded default) and PostgreSQL."""

from __future__ import annotations

from zero_memory import errors
from zero_memory.store.base import SYSTEM, Store, System, Tx

__all__ = ["SYSTEM", "Store", "System", "Tx", "open_store"]


def open_store(url: str, *, dim: int = 512) -> Store:
    """Open (and migrate) the store a database URL names.

    Each adapter is imported when it is opened: a SQLite installation never loads psycopg.
    """
    if url.startswith("sqlite:"):
        from zero_memory.store.sqlite import SQLiteStore

        return SQLiteStore.open(url, dim=dim)
    if url.startswith(("postgresql:", "postgres:")):
        from zero_memory.store.postgres import PostgresStore

        return PostgresStore.open(url, dim=dim)
    raise errors.validation("ZM_DATABASE_URL: expected sqlite:///PATH or postgresql://…")
