"""The store port and its two adapters: SQLite (embedded default) and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from zero_memory import errors
from zero_memory.store import migrations
from zero_memory.store.base import Store, Tx
from zero_memory.store.ports.reader import SYSTEM, System

__all__ = ["SYSTEM", "Store", "System", "Tx", "open_store", "pending_migrations", "system_tx"]


def open_store(url: str, *, dim: int = 512) -> Store:
    """Open (and migrate) the store a database URL names.

    Each adapter is imported when it is opened: a SQLite installation never loads psycopg.
    """
    if url.startswith("sqlite:"):
        from zero_memory.store.sqlite.adapter import SQLiteStore

        return SQLiteStore.open(url, dim=dim)
    if url.startswith(("postgresql:", "postgres:")):
        from zero_memory.store.postgres.adapter import PostgresStore

        return PostgresStore.open(url, dim=dim)
    raise errors.validation("ZM_DATABASE_URL: expected sqlite:///PATH or postgresql://…")


def pending_migrations(url: str) -> list[str]:
    """The migrations opening this database would apply, read without changing it (``zm db migrate --check``).

    A SQLite file is opened read-only and never created: a missing one is ``not_found:``. Refuses
    (``conflict:``) a database migrated by a newer release, as opening it does.
    """
    if url.startswith("sqlite:"):
        from zero_memory.store.sqlite.adapter import sqlite_path
        from zero_memory.store.sqlite.read import applied_migrations

        return [name for _, name, _ in migrations.pending("sqlite", applied_migrations(sqlite_path(url)))]
    if url.startswith(("postgresql:", "postgres:")):
        from zero_memory.store.postgres.adapter import PostgresStore

        # The pool is never opened: one read-only connection of its own reads the applied versions.
        return PostgresStore(url, dim=0).pending_migrations()
    raise errors.validation("ZM_DATABASE_URL: expected sqlite:///PATH or postgresql://…")


@contextmanager
def system_tx(store: Store, name: str, *, write: bool = False) -> Iterator[Tx]:
    """A transaction of the named system pass (``Tx.act_as_system``): it acts across owners."""
    with store.tx(write=write) as tx:
        tx.act_as_system(name)
        yield tx
