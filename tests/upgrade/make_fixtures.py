"""Write the upgrade fixtures: a small installation at each schema level that landed, on both backends.

A level is a commit of the main history that added a migration for a
dialect; it is named by the newest migration that commit added
(``schema-0009.sqlite.gz`` is a SQLite store as the code stood once 0009 had
landed, up to the commit before the dialect's next migration). Migrations
written in parallel landed out of number order (0004 after 0008, 0009 after
PostgreSQL's 0011), so a level's file does not hold every number below its
name: the tests read what each file applied. For each level this script checks
that commit out in a temporary worktree and runs ``populate.py`` with the
worktree's ``src`` first on the path, so the store is written by that
release's own code; the SQLite file is folded into one file and gzipped, the
PostgreSQL database is dumped (``pg_dump --inserts``, read as the server's
superuser, past row-level security) and gzipped.

The committed files stay as they are while the schema moves on: that is what
lets tests/upgrade migrate them with newer code. After a new migration lands,
add its level's fixtures (the others are kept)::

    python -m tests.upgrade.make_fixtures            # every level without a fixture yet
    python -m tests.upgrade.make_fixtures 0021       # that level only, written again

It runs the old code with this environment's packages: the levels from 0004
to 0019 had the SQLite index on usearch, which the ``bench`` extra installs.
"""

from __future__ import annotations

import gzip
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.pg import pg_bin, session_server

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).parents[2]
MIGRATIONS = "src/zero_memory/store/migrations"
POPULATE = Path(__file__).with_name("populate.py")
DIALECTS = ("sqlite", "postgres")


@dataclass(frozen=True)
class Level:
    dialect: str
    name: str  # the newest migration the commit added, "0009"
    commit: str  # the last commit whose migrations of the dialect are these

    @property
    def fixture(self) -> Path:
        suffix = "sqlite.gz" if self.dialect == "sqlite" else "postgres.sql.gz"
        return FIXTURES / f"schema-{self.name}.{suffix}"


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, check=True).stdout


def levels(dialect: str, until: str = "HEAD") -> list[Level]:
    """Every schema level of ``dialect`` on the first-parent history up to ``until``, oldest first."""
    folder = f"{MIGRATIONS}/{dialect}"
    changes = git("log", "--first-parent", "--reverse", "--format=%H", until, "--", folder).split()
    found = []
    for index, commit in enumerate(changes):
        added = git("show", "--first-parent", "--diff-filter=A", "--name-only", "--format=", commit, "--", folder)
        versions = sorted(Path(p).name[:4] for p in added.split() if p.endswith(".sql"))
        if not versions:
            continue
        # The code as it stood just before the dialect's next migration: the fullest at this schema.
        last = (
            git("rev-parse", f"{changes[index + 1]}^").strip()
            if index + 1 < len(changes)
            else git("rev-parse", until).strip()
        )
        found.append(Level(dialect, versions[-1], last))
    return found


def build(level: Level, worktree: Path, home: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(worktree / "src")}
    env = {k: v for k, v in env.items() if not k.startswith(("ZM_", "OPENAI_", "ANTHROPIC_"))}
    level.fixture.parent.mkdir(parents=True, exist_ok=True)
    if level.dialect == "sqlite":
        path = home / f"schema-{level.name}.sqlite"
        subprocess.run([sys.executable, str(POPULATE), f"sqlite:///{path}", str(home)], env=env, check=True)
        # One self-contained file: fold the write-ahead log back in.
        with sqlite3.connect(path) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.execute("PRAGMA journal_mode = DELETE")
            conn.execute("VACUUM")
        level.fixture.write_bytes(gzip.compress(path.read_bytes(), mtime=0))
        return
    server = session_server()
    url = server.fresh_url()
    subprocess.run([sys.executable, str(POPULATE), url, str(home)], env=env, check=True)
    dump = subprocess.run(
        [str(pg_bin("pg_dump")), "--inserts", "--no-owner", "--no-privileges", "--dbname", server.as_admin(url)],
        capture_output=True,
        check=True,
    ).stdout
    level.fixture.write_bytes(gzip.compress(dump, mtime=0))
    server.drop(url)


def main(names: list[str]) -> None:
    wanted = [lv for d in DIALECTS for lv in levels(d) if (lv.name in names if names else not lv.fixture.exists())]
    with tempfile.TemporaryDirectory(prefix="zm-fixtures-") as scratch:
        for commit in sorted({lv.commit for lv in wanted}):
            worktree = Path(scratch) / commit[:12]
            git("worktree", "add", "--detach", str(worktree), commit)
            try:
                for level in (lv for lv in wanted if lv.commit == commit):
                    home = Path(scratch) / f"home-{level.dialect}-{level.name}"
                    home.mkdir()
                    try:
                        build(level, worktree, home)
                        print(f"wrote {level.fixture.name} with {commit[:12]}", flush=True)
                    except subprocess.CalledProcessError as exc:
                        print(f"could not write {level.fixture.name} with {commit[:12]}: {exc}", flush=True)
                    shutil.rmtree(home, ignore_errors=True)
            finally:
                git("worktree", "remove", "--force", str(worktree))
    session_server().shutdown()


if __name__ == "__main__":
    main(sys.argv[1:])
