"""A database written by release 0.1.0 (tests/upgrade/fixtures) opened by this code, on both stores.

The fixtures were written by ``make_fixtures.py`` at the 0.1.0 schema and are
never regenerated: this code migrates them, then recalls from them through
``zm`` as a subprocess.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import subprocess
from pathlib import Path

import psycopg
import pytest

from tests.cli.harness import Zm
from tests.pg import pg_bin
from tests.upgrade.make_fixtures import RELEASE
from zero_memory.store import migrations

FIXTURES = Path(__file__).parent / "fixtures"
RELEASE_MIGRATIONS = {"0001_init.sql", "0002_passes.sql"}


def load_sqlite_fixture(tmp_path: Path) -> str:
    path = tmp_path / "old.sqlite"
    shutil.copyfile(FIXTURES / f"release-{RELEASE}.sqlite", path)
    return f"sqlite:///{path}"


def load_postgres_fixture(url: str) -> str:
    """Load the dump as the servers' role, which then owns the tables, as in an installation it created.

    The database has pgvector already (made by an administrator, docs/deployment.md), so the
    dump's comment on the extension, which only its owner may write, is left out.
    """
    dump = (FIXTURES / f"release-{RELEASE}.postgres.sql").read_text(encoding="utf-8")
    script = "".join(line for line in dump.splitlines(keepends=True) if not line.startswith("COMMENT ON EXTENSION"))
    subprocess.run(
        [str(pg_bin("psql")), "--quiet", "-v", "ON_ERROR_STOP=1", "--file", "-", url],
        input=script,
        capture_output=True,
        text=True,
        check=True,
    )
    return url


@pytest.fixture(params=["sqlite", "postgres"])
def old_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return load_sqlite_fixture(tmp_path)
    return load_postgres_fixture(request.getfixturevalue("pg_url"))


def applied_versions(url: str) -> list[str]:
    if url.startswith("sqlite:"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
            return [r[0] for r in conn.execute("SELECT name FROM schema_migrations ORDER BY version")]
    with psycopg.connect(url) as conn:
        return [r[0] for r in conn.execute("SELECT name FROM schema_migrations ORDER BY version")]


def test_the_fixtures_are_at_the_release_schema(old_url: str) -> None:
    assert set(applied_versions(old_url)) == RELEASE_MIGRATIONS


def test_check_lists_what_would_change_and_changes_nothing(zm: Zm, old_url: str, tmp_path: Path) -> None:
    backend = "sqlite" if old_url.startswith("sqlite:") else "postgres"
    newer = [name for _, name, _ in migrations.scripts(backend) if name not in RELEASE_MIGRATIONS]
    before = fingerprint(old_url)
    checked = zm("db", "migrate", "--check", "--json", env={"ZM_DATABASE_URL": old_url})
    assert checked.exit_code == 0, checked.stderr
    assert checked.json() == {"pending": newer, "backend": backend}
    text = zm("db", "migrate", "--check", env={"ZM_DATABASE_URL": old_url})
    assert text.stdout.strip() == f"{backend}: " + (f"would apply {', '.join(newer)}" if newer else "up to date")
    assert fingerprint(old_url) == before
    assert set(applied_versions(old_url)) == RELEASE_MIGRATIONS


def test_the_next_release_migrates_the_old_database_and_recalls_from_it(zm: Zm, old_url: str) -> None:
    env = {"ZM_DATABASE_URL": old_url}
    migrated = zm("db", "migrate", "--json", env=env, binary=True)
    assert migrated.exit_code == 0, migrated.stderr
    backend = "sqlite" if old_url.startswith("sqlite:") else "postgres"
    assert applied_versions(old_url) == [name for _, name, _ in migrations.scripts(backend)]
    assert zm("db", "migrate", "--check", "--json", env=env).json()["pending"] == []
    if backend == "postgres":
        # Migrations after 0009 see every row past row-level security: 0011 analyzed the memories it found.
        with psycopg.connect(old_url) as conn:
            analyzed = conn.execute("SELECT last_analyze FROM pg_stat_user_tables WHERE relname = 'memories'")
            assert analyzed.fetchone()[0] is not None
    alice = zm(
        "recall", "which port does staging use", "--scope", "*", "--json", env={**env, "ZM_USER": "alice"}, binary=True
    )
    assert alice.exit_code == 0, alice.stderr
    contents = [h["content"] for h in alice.json()["hits"]]
    assert contents[0] == "The staging database runs on port 6543"
    assert "Bob prefers tabs in Makefiles only" not in contents
    bob = zm("recall", "numpy version pin", "--scope", "*", "--json", env={**env, "ZM_USER": "bob"})
    assert bob.exit_code == 0, bob.stderr
    bob_contents = [h["content"] for h in bob.json()["hits"]]
    assert bob_contents[0] == "We pin numpy below 3 until the vector index is ported"
    assert "The staging database runs on port 6543" not in bob_contents
    # Forgotten before the upgrade, still forgotten after it.
    assert "Rotate the backup encryption key" not in [
        h["content"]
        for h in zm("recall", "backup key rotation", "--scope", "*", "--json", env={**env, "ZM_USER": "alice"}).json()[
            "hits"
        ]
    ]


def test_a_database_newer_than_the_code_is_refused(zm: Zm, old_url: str) -> None:
    record_future_migration(old_url)
    env = {"ZM_DATABASE_URL": old_url, "ZM_USER": "alice"}
    for args in (("db", "migrate"), ("db", "migrate", "--check"), ("recall", "anything")):
        refused = zm(*args, env=env, binary=True)
        assert refused.exit_code == 1, args
        assert refused.stderr.startswith("conflict: the database was migrated by a newer zero-memory"), refused.stderr
        assert "9999_from_the_future.sql" in refused.stderr and "downgrading is not supported" in refused.stderr
    assert "9999_from_the_future.sql" in applied_versions(old_url)


def record_future_migration(url: str) -> None:
    insert = "INSERT INTO schema_migrations(version, name, applied_at) VALUES (9999, '9999_from_the_future.sql', 'x')"
    if url.startswith("sqlite:"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
            conn.execute(insert)
    else:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(insert)


def fingerprint(url: str) -> str:
    """A digest of every table's rows, so a test can tell that nothing changed."""
    digest = hashlib.sha256()
    if url.startswith("sqlite:"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
            tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
            for table in tables:
                digest.update(table.encode())
                for row in conn.execute(f'SELECT * FROM "{table}" ORDER BY 1'):
                    digest.update(repr(row).encode())
        return digest.hexdigest()
    with psycopg.connect(url) as conn:
        tables = [
            r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")
        ]
        for table in tables:
            digest.update(table.encode())
            for row in conn.execute(f'SELECT * FROM "{table}" ORDER BY 1'):
                digest.update(repr(row).encode())
        indexes = conn.execute("SELECT indexname FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1").fetchall()
        digest.update(repr(indexes).encode())
    return digest.hexdigest()
