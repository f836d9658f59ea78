"""Account deletion: the one operation that removes rows (``memory/erasure.py`` decides when).

A user's memories go, with everything that hangs off them, except the memories
they wrote to a project or team scope another member still reads: those stay,
and so does what teammates need of them (their links, pins, queue rows, audit
trail and hygiene runs), with the user's id replaced by a pseudonym wherever it
appears. Every other row of the user goes: tokens, keys, OAuth grants, sessions,
memberships, projects nobody else is in, queue rows, capture chunks, usage,
surfacings, the ledger and their audit rows.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from zero_memory.clock import to_text
from zero_memory.store.queries.base import SqlBase

SHARED_MEMORY = "EXISTS (SELECT 1 FROM memberships ms WHERE ms.scope = m.scope AND ms.user_id <> ?)"
# The user's memories that go: theirs, in a scope no other member reads (personal, core, a project of theirs
# alone). Two parameters: the user, twice. The memories of theirs in a scope someone else is a member of stay.
REMOVED = f"SELECT id FROM memories m WHERE m.owner = ? AND NOT {SHARED_MEMORY}"
SHARED_PROJECT = "EXISTS (SELECT 1 FROM memberships ms WHERE ms.scope = projects.scope AND ms.user_id <> ?)"
# (table, key column, JSON column) that may name the user inside a kept row.
JSON_COLUMNS = (
    ("audit", "seq", "payload"),
    ("disputes", "id", "resolution"),
    ("runs", "id", "summary"),
    ("memories", "id", "source"),
)
PSEUDONYM_NAME = "former user"


class ErasureQueries(SqlBase):
    def _erasing(self) -> None:
        """Prepare the connection for removing rows (SQLite overwrites the freed pages); nothing by default."""

    def _erased(self) -> None:
        """Drop what an index keeps of the removed rows until it is rebuilt (SQLite's full text); nothing by default."""

    def erase_user(self, uid: str, pseudonym: str, at: datetime) -> dict[str, int]:
        """Remove a user (see the module's docstring); how many rows went from each table, and how many
        memories and projects stayed under ``pseudonym`` (``kept_memories``, ``kept_projects``)."""
        self._erasing()
        me, doomed = (uid,), (uid, uid)
        counts: dict[str, int] = {}
        kept_memories = self._count(
            f"SELECT count(*) AS n FROM memories m WHERE m.owner = ? AND {SHARED_MEMORY}", doomed
        )
        kept_projects = self._count(f"SELECT count(*) AS n FROM projects WHERE owner = ? AND {SHARED_PROJECT}", doomed)
        if kept_memories or kept_projects:
            self._exec(
                "INSERT INTO users(id, display_name, created_at, is_local) VALUES (?, ?, ?, 0) "
                "ON CONFLICT (id) DO NOTHING",
                (pseudonym, PSEUDONYM_NAME, to_text(at)),
            )
        # What hangs off the memories that go, then the memories.
        counts["pins"] = self._exec(f"DELETE FROM pins WHERE memory_id IN ({REMOVED})", doomed)
        counts["memory_anchors"] = self._exec(f"DELETE FROM memory_anchors WHERE memory_id IN ({REMOVED})", doomed)
        counts["links"] = self._exec(f"DELETE FROM links WHERE src IN ({REMOVED}) OR dst IN ({REMOVED})", doomed * 2)
        counts["rescan_guards"] = self._exec(f"DELETE FROM rescan_guards WHERE memory_id IN ({REMOVED})", doomed)
        counts["judgements"] = self._erase_judgements(doomed)
        counts["disputes"] = self._exec(
            f"DELETE FROM disputes WHERE memory_a IN ({REMOVED}) OR memory_b IN ({REMOVED})", doomed * 2
        )
        counts["portability_candidates"] = self._exec(
            f"DELETE FROM portability_candidates WHERE owner = ? OR memory_id IN ({REMOVED})", (uid, *doomed)
        )
        counts["surfacings"] = self._exec(
            f"DELETE FROM surfacings WHERE user_id = ? OR memory_id IN ({REMOVED})", (uid, *doomed)
        )
        counts["surfacing_days"] = self._exec(
            f"DELETE FROM surfacing_days WHERE user_id = ? OR memory_id IN ({REMOVED})", (uid, *doomed)
        )
        counts["audit_memories"] = self._exec(f"DELETE FROM audit_memories WHERE memory_id IN ({REMOVED})", doomed)
        # The user's audit rows, unless they are the trail of a memory that stays.
        counts["audit"] = self._exec(
            "DELETE FROM audit WHERE (actor = ? OR owner = ?) "
            "AND NOT EXISTS (SELECT 1 FROM audit_memories am WHERE am.audit_seq = audit.seq)",
            (uid, uid),
        )
        counts["memories"] = self._exec(f"DELETE FROM memories WHERE id IN ({REMOVED})", doomed)
        # Their runs, unless a kept audit row is part of one (undoing it needs the run).
        counts["runs"] = self._exec(
            "DELETE FROM runs WHERE owner = ? AND NOT EXISTS (SELECT 1 FROM audit a WHERE a.run_id = runs.id)", me
        )
        for table, column in (
            ("usage_ledger", "owner"),
            ("usage_events", "user_id"),
            ("usage_event_days", "user_id"),
            ("sessions", "owner"),
            ("capture_chunks", "owner"),
            ("capture_budgets", "user_id"),
            ("tokens", "user_id"),
            ("provider_keys", "user_id"),
            ("oauth_tokens", "user_id"),
            ("oauth_codes", "user_id"),
            ("oauth_grants", "user_id"),
        ):
            counts[table] = self._exec(f"DELETE FROM {table} WHERE {column} = ?", me)
        # What stays names the pseudonym instead.
        self._exec(f"UPDATE projects SET owner = ? WHERE owner = ? AND {SHARED_PROJECT}", (pseudonym, *doomed))
        counts["memberships"] = self._exec(
            "DELETE FROM memberships WHERE user_id = ? OR scope IN (SELECT scope FROM projects WHERE owner = ?)", doomed
        )
        counts["projects"] = self._exec("DELETE FROM projects WHERE owner = ?", me)
        for table, column in (
            ("memories", "owner"),
            ("pins", "pinned_by"),
            ("links", "created_by"),
            ("disputes", "owner"),
            ("disputes", "resolved_by"),
            ("portability_candidates", "resolved_by"),
            ("audit", "actor"),
            ("audit", "owner"),
            ("runs", "owner"),
            ("runs", "started_by"),
        ):
            self._exec(f"UPDATE {table} SET {column} = ? WHERE {column} = ?", (pseudonym, uid))
        for table, key, column in JSON_COLUMNS:
            self._rename_in_json(table, key, column, uid, pseudonym)
        counts["users"] = self._exec("DELETE FROM users WHERE id = ?", me)
        self._erased()
        counts["kept_memories"] = kept_memories
        counts["kept_projects"] = kept_projects
        return counts

    def _count(self, sql: str, params: tuple[Any, ...]) -> int:
        rows = self._query(sql, params)
        return int(rows[0]["n"]) if rows else 0

    def _erase_judgements(self, doomed: tuple[str, str]) -> int:
        """Cached verdicts on a pair with a memory that goes (their rationale may quote it)."""
        removed = {r["id"] for r in self._query(REMOVED, doomed)}
        if not removed:
            return 0
        gone = [
            r["pair_key"]
            for r in self._query("SELECT DISTINCT pair_key FROM judgements")
            if any(part in removed for part in r["pair_key"].split("|"))
        ]
        return sum(self._exec("DELETE FROM judgements WHERE pair_key = ?", (key,)) for key in gone)

    def _rename_in_json(self, table: str, key: str, column: str, uid: str, pseudonym: str) -> None:
        """Replace the user's id (and their personal and core scope) in the JSON values of kept rows."""
        names = {uid: pseudonym, f"user.{uid}": f"user.{pseudonym}", f"user.{uid}.core": f"user.{pseudonym}.core"}
        # LIKE only narrows the rows ('_' may match any letter): each value is compared whole below.
        for row in self._query(f"SELECT {key} AS k, {column} AS v FROM {table} WHERE {column} LIKE ?", (f"%{uid}%",)):
            value = json.loads(row["v"])
            renamed = _renamed(value, names)
            if renamed != value:
                self._exec(
                    f"UPDATE {table} SET {column} = ? WHERE {key} = ?", (json.dumps(renamed, sort_keys=True), row["k"])
                )


def _renamed(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, list):
        return [_renamed(v, names) for v in value]
    if isinstance(value, dict):
        return {k: _renamed(v, names) for k, v in value.items()}
    return value
