"""Opaque ids, prefixed by what they name and sortable by creation (ULID)."""

from __future__ import annotations

from ulid import ULID


def new_id(prefix: str) -> str:
    return f"{prefix}_{str(ULID()).lower()}"


def memory_id() -> str:
    return new_id("mem")
