"""Deleting an account: confirm, export, remove (``zm user delete``, the dashboard's account page).

The one operation that removes rows. The user's memories go with every row of
theirs (``Tx.erase_user``), except the memories they wrote to a project or team
someone else is in: those stay for the others, under a pseudonym instead of the
name. The pseudonym is a digest of the account keyed with ``ZM_SECRET_KEY``:
stable for the account, and no one without the key can recover the name by
hashing candidate names. The deletion is confirmed by typing the user's name,
and audited with the pseudonym and counts, never content or the name.

Before anything is removed the user's memories are exported, in ``zm export``'s
JSONL: every memory the user can see, in every state.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zero_memory import errors
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.clock import to_text
from zero_memory.domain.records import User
from zero_memory.memory.exports import jsonl_lines
from zero_memory.store import system_tx

PSEUDONYM_PREFIX = "former-"
PASS = "account-deletion"


@dataclass(frozen=True, slots=True)
class Erasure:
    """What a deletion did: the pseudonym kept rows now name, rows removed per table, what stayed."""

    pseudonym: str
    removed: dict[str, int]
    kept_memories: int
    kept_projects: int
    exported: int | None = None
    export_path: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "pseudonym": self.pseudonym,
            "removed": self.removed,
            "kept_memories": self.kept_memories,
            "kept_projects": self.kept_projects,
            "exported": self.exported,
            "export_path": self.export_path,
        }


def pseudonym(secret_key: str, user: User) -> str:
    """The id a deleted user's kept memories are attributed to: the same for the same account, always."""
    account = f"{user.id}\n{to_text(user.created_at)}".encode()
    return PSEUDONYM_PREFIX + hmac.new(secret_key.encode(), account, hashlib.sha256).hexdigest()[:16]


def account(app: App, uid: str) -> User:
    """The account ``uid`` names; ``not_found:`` when there is none."""
    with system_tx(app.store, PASS) as tx:
        user = tx.get_user(uid)
    if user is None:
        raise errors.not_found(f"user {uid[:80]}")
    return user


def check_confirmation(uid: str, confirm: str) -> None:
    """``validation_failed:`` unless ``confirm`` is the user's name, exactly."""
    if not hmac.compare_digest(confirm.strip().encode(), uid.encode()):
        raise errors.validation(f"confirm: type the user's name, {uid}, to delete the account; nothing was deleted")


def export_lines(app: App, uid: str) -> Iterator[str]:
    """The user's export, line by line: what ``zm export`` writes for that user."""
    return jsonl_lines(app, Caller(uid, client="account-deletion", author_kind="human"))


def write_export(app: App, uid: str, path: Path) -> int:
    """Write the user's export to a new file (mode 0600), complete and flushed to disk, or not at all.

    Refuses a path that exists: an export is never written over another file.
    """
    if path.exists():
        raise errors.validation(f"export: {path} exists already; name a new file")
    count = 0
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.partial")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            for line in export_lines(app, uid):
                handle.write(line + "\n")
                count += 1
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    return count


def default_export_path(app: App, uid: str) -> Path:
    """Where ``zm user delete`` writes the export unless told: the data directory's ``exports`` folder."""
    stamp = app.clock().strftime("%Y%m%dT%H%M%SZ")
    return Path(app.settings.home) / "exports" / f"{uid}-{stamp}.jsonl"


def erase(app: App, user: User, *, by_self: bool) -> Erasure:
    """Remove the account (``Tx.erase_user``) as the system pass ``account-deletion``, audit it without
    content, then clear what still holds the removed rows beside the tables (``Store.purge_removed``)."""
    if not app.settings.secret_key:
        raise errors.internal("account deletion needs a secret key for the pseudonym; build the app with build_app")
    alias = pseudonym(app.settings.secret_key, user)
    now = app.clock()
    with system_tx(app.store, PASS, write=True) as tx:
        tx.serialize(f"user:{user.id}")
        if tx.get_user(user.id) is None:
            raise errors.not_found(f"user {user.id}")
        counts = tx.erase_user(user.id, alias, now)
        kept_memories = counts.pop("kept_memories")
        kept_projects = counts.pop("kept_projects")
        removed = {table: n for table, n in counts.items() if n}
        tx.add_audit(
            actor=alias if by_self else "operator",
            action="user.delete",
            owner=alias,
            memory_ids=[],
            payload={
                "user": alias,
                "by": "self" if by_self else "operator",
                "removed": removed,
                "kept_memories": kept_memories,
                "kept_projects": kept_projects,
            },
            run_id=None,
            at=now,
        )
    app.store.purge_removed()
    return Erasure(alias, removed, kept_memories, kept_projects)


def delete_account(app: App, uid: str, *, confirm: str, export_path: Path | None = None) -> Erasure:
    """The operator's deletion: confirm, write the export (default: ``default_export_path``), then erase."""
    user = account(app, uid)
    check_confirmation(uid, confirm)
    path = export_path or default_export_path(app, uid)
    exported = write_export(app, uid, path)
    done = erase(app, user, by_self=False)
    return Erasure(done.pseudonym, done.removed, done.kept_memories, done.kept_projects, exported, str(path))
