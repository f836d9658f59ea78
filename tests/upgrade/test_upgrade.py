"""A database written at every schema level that landed (tests/upgrade/fixtures) opened by this code, on both stores.

Each fixture was written by ``make_fixtures.py`` with the code of its level
and is never regenerated: this code checks it (``zm db migrate --check``),
migrates it (``zm db migrate`` as a subprocess), then reads and writes it
through ``zm``. The cases are one per fixture file found, so a new level's
fixtures are tested as soon as they are added.
"""

from __future__ import annotations

import gzip
import hashlib
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from tests.cli.harness import Zm
from tests.pg import PgServer, pg_bin
from tests.upgrade.populate import DISPUTED, FORGOTTEN
from zero_memory.store import migrations

FIXTURES = Path(__file__).parent / "fixtures"
SUFFIXES = {"sqlite": ".sqlite.gz", "postgres": ".postgres.sql.gz"}


def fixtures(backend: str) -> list[Path]:
    return sorted(FIXTURES.glob(f"schema-*{SUFFIXES[backend]}"))


def level_of(fixture: Path) -> str:
    return fixture.name.removeprefix("schema-")[:4]


CASES = [pytest.param((b, f), id=f"{b}-{level_of(f)}") for b in SUFFIXES for f in fixtures(b)]


@dataclass(frozen=True)
class Old:
    """A fixture loaded into a database of the test's own: ``url`` as the server uses it, ``admin`` past
    row-level security (the same for SQLite)."""

    backend: str
    level: str
    url: str
    admin: str


def load_sqlite_fixture(fixture: Path, tmp_path: Path) -> str:
    path = tmp_path / "old.sqlite"
    path.write_bytes(gzip.decompress(fixture.read_bytes()))
    return f"sqlite:///{path}"


def load_postgres_fixture(fixture: Path, url: str) -> str:
    """Load the dump as the servers' role, which then owns the tables, as in an installation it created.

    The database has pgvector already (made by an administrator, docs/deployment.md), so the
    dump's comment on the extension, which only its owner may write, is left out.
    """
    dump = gzip.decompress(fixture.read_bytes()).decode("utf-8")
    script = "".join(line for line in dump.splitlines(keepends=True) if not line.startswith("COMMENT ON EXTENSION"))
    subprocess.run(
        [str(pg_bin("psql")), "--quiet", "-v", "ON_ERROR_STOP=1", "--file", "-", url],
        input=script,
        capture_output=True,
        text=True,
        check=True,
    )
    return url


@pytest.fixture(params=CASES)
def old(request: pytest.FixtureRequest, tmp_path: Path) -> Old:
    backend, fixture = request.param
    if backend == "sqlite":
        url = load_sqlite_fixture(fixture, tmp_path)
        return Old(backend, level_of(fixture), url, url)
    server: PgServer = request.getfixturevalue("pg_server")
    url = load_postgres_fixture(fixture, server.fresh_url())
    return Old(backend, level_of(fixture), url, server.as_admin(url))


def query(url: str, sql: str) -> list[tuple[object, ...]]:
    if url.startswith("sqlite:"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
            return conn.execute(sql).fetchall()
    with psycopg.connect(url) as conn:
        return conn.execute(sql).fetchall()


def applied_versions(url: str) -> list[str]:
    return [str(r[0]) for r in query(url, "SELECT name FROM schema_migrations ORDER BY version")]


# The levels that had landed when the fixtures were first written for each: a later level adds its files.
LANDED = {
    "sqlite": ["0001", "0002", "0004", "0005", "0006", "0007", "0008", "0009", "0010", "0012", "0013", "0014", "0017"],
    "postgres": [
        *("0001", "0002", "0004", "0005", "0006", "0007", "0008", "0009", "0010", "0011", "0012"),
        *("0014", "0015", "0017", "0018", "0019", "0020"),
    ],
}


@pytest.mark.parametrize("backend", list(SUFFIXES))
def test_every_level_that_landed_has_its_fixture(backend: str) -> None:
    """Named by the newest migration its level added."""
    assert set(LANDED[backend]) <= {level_of(f) for f in fixtures(backend)}


def test_check_reports_the_level_and_changes_nothing(zm: Zm, old: Old) -> None:
    applied = set(applied_versions(old.admin))
    # The fixture is at its level: it applied the migration it is named by, and none this code lacks.
    assert any(name.startswith(f"{old.level}_") for name in applied), applied
    assert applied <= {name for _, name, _ in migrations.scripts(old.backend)}
    newer = [name for _, name, _ in migrations.scripts(old.backend) if name not in applied]
    before = fingerprint(old.admin)
    checked = zm("db", "migrate", "--check", "--json", env={"ZM_DATABASE_URL": old.url}, binary=True)
    assert checked.exit_code == 0, checked.stderr
    assert checked.json() == {"pending": newer, "backend": old.backend}
    text = zm("db", "migrate", "--check", env={"ZM_DATABASE_URL": old.url})
    assert text.stdout.strip() == f"{old.backend}: " + (f"would apply {', '.join(newer)}" if newer else "up to date")
    assert fingerprint(old.admin) == before
    assert set(applied_versions(old.admin)) == applied


def test_this_code_migrates_the_old_database_then_reads_and_writes_it(zm: Zm, old: Old) -> None:
    env = {"ZM_DATABASE_URL": old.url}
    audit = query(old.admin, "SELECT seq, action, memory_ids FROM audit ORDER BY seq")
    queue = query(old.admin, "SELECT id, verdict, status, memory_a, memory_b FROM disputes ORDER BY id")
    before = set(applied_versions(old.admin))
    migrated = zm("db", "migrate", "--json", env=env, binary=True)
    assert migrated.exit_code == 0, migrated.stderr
    assert applied_versions(old.admin) == [name for _, name, _ in migrations.scripts(old.backend)]
    assert zm("db", "migrate", "--check", "--json", env=env).json()["pending"] == []
    if old.backend == "postgres" and "0011_fulltext_words.sql" not in before:
        # Migrations after 0009 see every row past row-level security: 0011 analyzed the memories it found.
        assert query(old.admin, "SELECT last_analyze FROM pg_stat_user_tables WHERE relname = 'memories'")[0][0]
    # The audit trail and the review queue as they were.
    assert audit and query(old.admin, "SELECT seq, action, memory_ids FROM audit ORDER BY seq")[: len(audit)] == audit
    assert query(old.admin, "SELECT id, verdict, status, memory_a, memory_b FROM disputes ORDER BY id") == queue
    if queue:
        listed = zm("conflicts", "list", "--json", env={**env, "ZM_USER": "alice"})
        assert listed.exit_code == 0, listed.stderr
        pairs = [{row["memory_a"]["content"], row["memory_b"]["content"]} for row in listed.json()["conflicts"]]
        assert pairs == [set(DISPUTED)]
    alice = recall(zm, env, "alice", "which port does staging use")
    assert alice[0] == "The staging database runs on port 6543"
    assert "Bob prefers tabs in Makefiles only" not in alice
    bob = recall(zm, env, "bob", "numpy version pin")
    assert bob[0] == "We pin numpy below 3 until the vector index is ported"
    assert "The staging database runs on port 6543" not in bob
    # Forgotten before the upgrade, still forgotten after it.
    assert FORGOTTEN not in recall(zm, env, "alice", "backup key rotation")
    wrote = zm(
        "remember", "The upgrade kept every memory", "--kind", "fact", "--scope", "personal", "--json",
        env={**env, "ZM_USER": "bob"},
    )  # fmt: skip
    assert wrote.exit_code == 0, wrote.stderr
    assert recall(zm, env, "bob", "did the upgrade keep the memories")[0] == "The upgrade kept every memory"


def recall(zm: Zm, env: dict[str, str], user: str, text: str) -> list[str]:
    found = zm("recall", text, "--scope", "*", "--json", env={**env, "ZM_USER": user})
    assert found.exit_code == 0, found.stderr
    return [hit["content"] for hit in found.json()["hits"]]


@pytest.mark.parametrize("backend", list(SUFFIXES))
def test_a_database_newer_than_the_code_is_refused(zm: Zm, backend: str, request: pytest.FixtureRequest) -> None:
    fixture = fixtures(backend)[0]
    if backend == "sqlite":
        url = admin = load_sqlite_fixture(fixture, request.getfixturevalue("tmp_path"))
    else:
        server: PgServer = request.getfixturevalue("pg_server")
        url = load_postgres_fixture(fixture, server.fresh_url())
        admin = server.as_admin(url)
    record_future_migration(admin)
    env = {"ZM_DATABASE_URL": url, "ZM_USER": "alice"}
    for args in (("db", "migrate"), ("db", "migrate", "--check"), ("recall", "anything")):
        refused = zm(*args, env=env, binary=True)
        assert refused.exit_code == 1, args
        assert refused.stderr.startswith("conflict: the database was migrated by a newer zero-memory"), refused.stderr
        assert "9999_from_the_future.sql" in refused.stderr and "downgrading is not supported" in refused.stderr
    assert "9999_from_the_future.sql" in applied_versions(admin)


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
