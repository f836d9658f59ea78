"""Backups and restores through ``zm db backup`` / ``zm db restore`` (SQLite), pg_dump / pg_restore (PostgreSQL)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests.cli.harness import Zm
from tests.pg import BACKUP_ROLE, PgServer, pg_bin, with_user
from tests.store.factories import DIM, user
from zero_memory.store import open_store


def sqlite_env(tmp_path: Path, name: str = "zm.db") -> tuple[dict[str, str], Path]:
    path = tmp_path / name
    return {"ZM_DATABASE_URL": f"sqlite:///{path}", "ZM_USER": "alice"}, path


def memory_contents(path: Path) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [r[0] for r in conn.execute("SELECT content FROM memories")]


def test_a_backup_taken_while_another_process_writes_is_a_consistent_copy(zm: Zm, tmp_path: Path) -> None:
    env, path = sqlite_env(tmp_path)
    store = open_store(env["ZM_DATABASE_URL"], dim=DIM)
    with store.tx(write=True) as tx:
        tx.add_user(user("alice"))
    store.close()
    stop = tmp_path / "stop"
    writer = subprocess.Popen(
        [sys.executable, "-m", "tests.store.writer", "stream", env["ZM_DATABASE_URL"], "row", str(stop)]
    )
    try:
        deadline = time.monotonic() + 120
        while len(memory_contents(path)) < 20 and time.monotonic() < deadline and writer.poll() is None:
            time.sleep(0.05)
        assert len(memory_contents(path)) >= 20, "the writer did not start"
        backed = zm("db", "backup", str(tmp_path / "copy.db"), "--json", env=env, binary=True)
    finally:
        stop.touch()
        writer.wait(timeout=120)
    assert backed.exit_code == 0, backed.stderr
    report = backed.json()
    copied = memory_contents(tmp_path / "copy.db")
    # One transaction per row, in order: a consistent snapshot holds exactly the first k of them.
    k = len(copied)
    assert k >= 20 and report["rows"] == {"users": 1, "memories": k}
    assert sorted(copied) == sorted(f"row {n}" for n in range(k))
    assert len(memory_contents(path)) >= k
    with sqlite3.connect(tmp_path / "copy.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("SELECT count(*) FROM memories_fts").fetchone()[0] == k
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert not (tmp_path / "copy.db-wal").exists()
    assert [p.name for p in tmp_path.iterdir() if "partial" in p.name] == []


def test_restore_refuses_a_non_empty_store_without_force_then_replaces_it(zm: Zm, tmp_path: Path) -> None:
    env, path = sqlite_env(tmp_path)
    kept = zm(
        "remember", "The nightly job runs at 02:00 UTC", "--kind", "fact", "--scope", "personal", "--json", env=env
    )
    assert kept.exit_code == 0, kept.stderr
    assert zm("db", "backup", str(tmp_path / "nightly.db"), env=env).exit_code == 0
    later = zm("remember", "Written after the backup was taken", "--kind", "fact", "--scope", "personal", env=env)
    assert later.exit_code == 0
    refused = zm("db", "restore", str(tmp_path / "nightly.db"), env=env, binary=True)
    assert refused.exit_code == 1
    assert refused.stderr.startswith("conflict: the store at") and "pass --force" in refused.stderr
    assert "Written after the backup was taken" in memory_contents(path)
    restored = zm("db", "restore", str(tmp_path / "nightly.db"), "--force", "--json", env=env, binary=True)
    assert restored.exit_code == 0, restored.stderr
    assert restored.json()["rows"] == {"users": 1, "memories": 1}
    assert memory_contents(path) == ["The nightly job runs at 02:00 UTC"]
    found = zm("recall", "when does the nightly job run", "--scope", "*", "--json", env=env)
    assert [h["id"] for h in found.json()["hits"]] == [kept.json()["id"]]
    assert zm("remember", "A write after the restore", "--kind", "fact", "--scope", "personal", env=env).exit_code == 0


def test_restore_into_a_new_installation_needs_no_force(zm: Zm, tmp_path: Path) -> None:
    env, _ = sqlite_env(tmp_path)
    assert zm("remember", "Staging lives in eu-west-1", "--kind", "fact", "--scope", "personal", env=env).exit_code == 0
    assert zm("db", "backup", str(tmp_path / "b.db"), env=env).exit_code == 0
    fresh_env, fresh = sqlite_env(tmp_path / "elsewhere")
    restored = zm("db", "restore", str(tmp_path / "b.db"), env=fresh_env)
    assert restored.exit_code == 0, restored.stderr
    assert restored.stdout.startswith(f"restored from {tmp_path / 'b.db'} (1 users, 1 memories; schema ")
    assert memory_contents(fresh) == ["Staging lives in eu-west-1"]


def test_bad_backup_and_restore_requests_are_refused_and_change_nothing(zm: Zm, tmp_path: Path) -> None:
    env, path = sqlite_env(tmp_path)
    assert zm("remember", "Something worth keeping", "--kind", "fact", "--scope", "personal", env=env).exit_code == 0
    (tmp_path / "taken.db").write_text("occupied")
    cases = [
        (("db", "backup", str(tmp_path / "taken.db")), "validation_failed: PATH:"),
        (("db", "backup", str(tmp_path / "no" / "dir.db")), "validation_failed: PATH: no directory"),
        (("db", "restore", str(tmp_path / "missing.db")), "not_found: no backup file"),
        (("db", "restore", str(tmp_path / "taken.db"), "--force"), "validation_failed: PATH:"),
        (("db", "restore", str(path), "--force"), "validation_failed: PATH: that is the store itself"),
    ]
    for args, prefix in cases:
        refused = zm(*args, env=env, binary=True)
        assert refused.exit_code == 1 and refused.stderr.startswith(prefix), (args, refused.stderr)
        assert refused.stderr.count("\n") == 1
    assert (tmp_path / "taken.db").read_text() == "occupied"
    assert memory_contents(path) == ["Something worth keeping"]
    pg = {"ZM_DATABASE_URL": "postgresql://zm@127.0.0.1:1/zm"}
    for args in (("db", "backup", str(tmp_path / "x.dump")), ("db", "restore", str(tmp_path / "taken.db"))):
        refused = zm(*args, env=pg)
        assert refused.exit_code == 1 and refused.stderr.startswith("validation_failed:") and "pg_" in refused.stderr


def test_a_newer_backup_is_refused_before_the_store_changes(zm: Zm, tmp_path: Path) -> None:
    env, path = sqlite_env(tmp_path)
    assert zm("remember", "Older content", "--kind", "fact", "--scope", "personal", env=env).exit_code == 0
    assert zm("db", "backup", str(tmp_path / "b.db"), env=env).exit_code == 0
    with sqlite3.connect(tmp_path / "b.db") as conn:
        conn.execute("INSERT INTO schema_migrations VALUES (9999, '9999_from_the_future.sql', 'x')")
    refused = zm("db", "restore", str(tmp_path / "b.db"), "--force", env=env)
    assert refused.exit_code == 1 and refused.stderr.startswith("conflict: the database was migrated by a newer")
    assert memory_contents(path) == ["Older content"]


def test_a_pg_dump_restored_into_a_fresh_database_recalls(zm: Zm, pg_server: PgServer, tmp_path: Path) -> None:
    source = pg_server.fresh_url()
    target = pg_server.fresh_url()
    try:
        env = {"ZM_DATABASE_URL": source, "ZM_USER": "alice"}
        kept = zm(
            "remember",
            "Invoices are archived for ten years",
            "--kind",
            "fact",
            "--scope",
            "personal",
            "--json",
            env=env,
        )
        assert kept.exit_code == 0, kept.stderr
        dump = tmp_path / "zm.dump"
        # The commands docs/deployment.md gives an operator: pg_dump as the backup role (it reads
        # past row-level security), pg_restore as the role the servers use, which owns the new database.
        backup_url = with_user(source, BACKUP_ROLE)
        subprocess.run([str(pg_bin("pg_dump")), "--format=custom", f"--file={dump}", backup_url], check=True)
        subprocess.run(
            [str(pg_bin("pg_restore")), "--no-owner", "--no-comments", f"--dbname={target}", str(dump)], check=True
        )
        restored = {"ZM_DATABASE_URL": target, "ZM_USER": "alice"}
        assert zm("db", "migrate", "--check", "--json", env=restored).json()["pending"] == []
        found = zm("recall", "how long do we keep invoices", "--scope", "*", "--json", env=restored, binary=True)
        assert found.exit_code == 0, found.stderr
        assert [h["id"] for h in found.json()["hits"]] == [kept.json()["id"]]
        after = zm("remember", "A write after the restore", "--kind", "fact", "--scope", "personal", env=restored)
        assert after.exit_code == 0, after.stderr
    finally:
        pg_server.drop(source)
        pg_server.drop(target)
