"""``zm db migrate --check`` (and ``zm db backup``'s source) only read the database, through the real binary.

An operator checks a file they may only read, or mistypes its path. The tests
run as root, whom file modes do not stop, so "may only read" is a read-only
bind mount of the file's folder in a mount namespace of the ``zm`` process
(``unshare``); "changes nothing" on a writable file is the file's bytes, its
modification time, its journal mode and the folder's listing, before and after.
"""

from __future__ import annotations

import gzip
import hashlib
import shutil
import sqlite3
import subprocess
from pathlib import Path

import psycopg
import pytest

from tests.cli.harness import BINARY_TIMEOUT_S, ZM, Result, Zm, app_for, environ
from tests.pg import PgServer, pg_server  # noqa: F401  (fixture)
from zero_memory.store import migrations

RELEASE_FIXTURE = Path(__file__).parents[1] / "upgrade" / "fixtures" / "schema-0002.sqlite.gz"
# Mount the folder ($0) read-only over itself, then run zm in that view of it.
READ_ONLY_MOUNT = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && exec "$@"'


def old_file(folder: Path) -> Path:
    """A store written by release 0.1.0 (schema level 0002): rollback-journal mode, two migrations."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "zm.db"
    path.write_bytes(gzip.decompress(RELEASE_FIXTURE.read_bytes()))
    return path


def current_file(folder: Path) -> Path:
    """A store of today's code, closed: WAL mode, up to date, no -wal beside it."""
    path = folder / "zm.db"
    app_for({"ZM_HOME": str(folder / "home"), "ZM_DATABASE_URL": f"sqlite:///{path}", "ZM_USER": "alice"}).close()
    shutil.rmtree(folder / "home")
    assert not Path(f"{path}-wal").exists()
    return path


def zm_on_read_only_folder(folder: Path, *args: str, env: dict[str, str]) -> Result:
    """The real ``zm ARGS`` with ``folder`` mounted read-only: no one, root included, can write there."""
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", READ_ONLY_MOUNT, str(folder), "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"no mount namespace here ({probe.stderr.decode().strip()})")
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", READ_ONLY_MOUNT, str(folder), str(ZM), *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=environ(env),
        timeout=BINARY_TIMEOUT_S,
        check=False,
    )
    return Result(done.returncode, done.stdout, done.stderr)


def state(folder: Path) -> dict[str, tuple[str, int]]:
    """Every file of the folder: its digest and its modification time."""
    return {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(folder.iterdir())
        if p.is_file()
    }


def journal_mode(path: Path) -> str:
    """Read from the file's header (bytes 18 and 19: 2 in WAL mode), since opening it may create files."""
    return "wal" if path.read_bytes()[18:20] == b"\x02\x02" else "delete"


def would_apply(applied: set[str]) -> str:
    pending = [name for _, name, _ in migrations.scripts("sqlite") if name not in applied]
    return "sqlite: " + (f"would apply {', '.join(pending)}" if pending else "up to date")


@pytest.mark.parametrize("made_by", ["release 0.1.0", "today"])
def test_check_answers_on_a_file_it_may_only_read(made_by: str, tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    path = old_file(folder) if made_by == "release 0.1.0" else current_file(folder)
    env = {"ZM_HOME": str(tmp_path / "home"), "ZM_DATABASE_URL": f"sqlite:///{path}"}
    before = state(folder)
    checked = zm_on_read_only_folder(folder, "db", "migrate", "--check", env=env)
    assert checked.exit_code == 0, checked.stderr
    assert checked.stderr == ""
    every = {name for _, name, _ in migrations.scripts("sqlite")}
    applied = {"0001_init.sql", "0002_passes.sql"} if made_by == "release 0.1.0" else every
    assert checked.stdout.strip() == would_apply(applied)
    assert state(folder) == before


@pytest.mark.parametrize("made_by", ["release 0.1.0", "today"])
def test_check_changes_no_byte_of_a_file_it_could_write(made_by: str, zm_binary: Zm, tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    path = old_file(folder) if made_by == "release 0.1.0" else current_file(folder)
    mode = journal_mode(path)
    before = state(folder)
    checked = zm_binary("db", "migrate", "--check", "--json", env={"ZM_DATABASE_URL": f"sqlite:///{path}"})
    assert checked.exit_code == 0, checked.stderr
    assert (checked.json()["pending"] == []) is (made_by == "today")
    # No -wal or -shm beside it, the same bytes, the same time, the same journal mode.
    assert state(folder) == before
    assert journal_mode(path) == mode == ("delete" if made_by == "release 0.1.0" else "wal")


def test_check_of_a_mistyped_path_creates_nothing(zm_binary: Zm, tmp_path: Path) -> None:
    missing = tmp_path / "dta" / "zm.db"
    for args in (("db", "migrate", "--check"), ("db", "migrate", "--check", "--json")):
        checked = zm_binary(*args, env={"ZM_DATABASE_URL": f"sqlite:///{missing}"})
        assert checked.exit_code == 1
        assert checked.stdout == ""
        assert checked.stderr.startswith(f"not_found: no SQLite database at {missing}"), checked.stderr
        assert len(checked.stderr.strip().splitlines()) == 1
    assert not missing.parent.exists()


def test_check_of_a_file_that_is_not_a_database_is_one_line(zm_binary: Zm, tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("not a database\n" * 10)
    checked = zm_binary("db", "migrate", "--check", env={"ZM_DATABASE_URL": f"sqlite:///{notes}"})
    assert checked.exit_code == 1
    assert checked.stderr.startswith(f"validation_failed: {notes} is not a SQLite database"), checked.stderr
    assert len(checked.stderr.strip().splitlines()) == 1
    assert notes.read_text() == "not a database\n" * 10


def test_a_backup_reads_a_store_it_may_only_read(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    path = current_file(folder)
    before = state(folder)
    copy = tmp_path / "copy.db"
    env = {"ZM_HOME": str(tmp_path / "home"), "ZM_DATABASE_URL": f"sqlite:///{path}"}
    backed = zm_on_read_only_folder(folder, "db", "backup", str(copy), "--json", env=env)
    assert backed.exit_code == 0, backed.stderr
    assert backed.json()["schema"] == [name for _, name, _ in migrations.scripts("sqlite")]
    assert state(folder) == before
    with sqlite3.connect(copy) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_postgres_check_only_reads(zm_binary: Zm, request: pytest.FixtureRequest) -> None:
    """A database whose every transaction is read-only (as on a standby) is checked all the same, and an
    empty one is left without even the migrations' table."""
    server: PgServer = request.getfixturevalue("pg_server")
    url = server.fresh_url()
    checked = zm_binary("db", "migrate", "--check", "--json", env={"ZM_DATABASE_URL": url})
    assert checked.exit_code == 0, checked.stderr
    assert checked.json()["pending"] == [name for _, name, _ in migrations.scripts("postgres")]
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute("SELECT to_regclass('schema_migrations')").fetchone() == (None,)
        conn.execute(f"ALTER DATABASE {conn.info.dbname} SET default_transaction_read_only = on")
    migrated = zm_binary("db", "migrate", env={"ZM_DATABASE_URL": url})
    assert migrated.exit_code == 1
    checked = zm_binary("db", "migrate", "--check", env={"ZM_DATABASE_URL": url})
    assert checked.exit_code == 0, checked.stderr
    assert checked.stdout.startswith("postgres: would apply 0001_init.sql")
