"""The PostgreSQL store's advisory locks: named locks, write serialization and migration."""

from __future__ import annotations

import hashlib

# Advisory locks take two int4 keys: a space, then a hash of the name. Spaces
# keep named locks, write serialization and migration apart from each other
# and from any single-bigint lock another application takes in the database.
NAMED_LOCKS = 0x7A6D01
SERIAL_LOCKS = 0x7A6D02
MIGRATION_LOCK = (0x7A6D03, 0)


def lock_key(name: str) -> int:
    """A stable signed 32-bit hash of a lock name, the same in every process."""
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=4).digest(), "big", signed=True)
