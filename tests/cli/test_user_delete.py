"""``zm user delete``, run as the real binary, on SQLite and on PostgreSQL (as the role bound by row-level security).

A user who has written to every table is deleted; every table is then read whole
(on PostgreSQL as the superuser, past the policies) and no row names them; the
memories they wrote to a team stay, attributed to a pseudonym, and teammates still
recall them; every other user's row is exactly as it was; the export holds every
memory. Bad input changes nothing.
"""

from __future__ import annotations

import json
import os
import pty
import select
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.cli.harness import ZM, Zm, app_for, environ
from tests.pg import PgServer, pg_server  # noqa: F401  (fixture)
from zero_memory.access import oauth, users
from zero_memory.access.caller import Caller
from zero_memory.access.projects import create_project, grant
from zero_memory.capture import budget
from zero_memory.domain.anchors import AnchorRecord, AnchorState, Origin
from zero_memory.domain.records import (
    CaptureChunk,
    ChunkStatus,
    Dispute,
    DisputeShape,
    DisputeStatus,
    Judgement,
    PortabilityCandidate,
    Run,
    RunStatus,
    pair_key,
)
from zero_memory.domain.scopes import ScopeKind
from zero_memory.ids import new_id
from zero_memory.judge import keys
from zero_memory.memory.lifecycle import forget, link
from zero_memory.memory.models import RememberRequest
from zero_memory.memory.pins import pin
from zero_memory.memory.recall import recall
from zero_memory.memory.write import remember
from zero_memory.store import system_tx

NAME = "quill"  # a name no seeded text contains: any row holding it is a row of the user
TEAM = "team.bob.shared"
GONE_TEXT = "The marmalade ledger reconciles every zanzibarian invoice"  # a memory that must leave no trace
BY_MEMORY_ID = {"audit_memories", "judgements", "links", "memory_anchors", "rescan_guards"}
# Bookkeeping, no user in them.
SKIPPED_TABLES = {"counters", "locks", "schema_migrations", "memory_removals", "postings_removed"}


@pytest.fixture(params=["sqlite", "postgres"])
def installation(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[dict[str, str], str]]:
    """(environment, the URL to inspect every row through)."""
    env = {"ZM_HOME": str(tmp_path / "home"), "ZM_EMBEDDING_MODEL": "hash:512", "COLUMNS": "200"}
    if request.param == "sqlite":
        yield env, f"sqlite:///{tmp_path / 'home' / 'zm.db'}"
        return
    server: PgServer = request.getfixturevalue("pg_server")
    url = server.fresh_url()
    yield {**env, "ZM_DATABASE_URL": url}, server.as_admin(url)
    server.drop(url)


def seed(env: dict[str, str]) -> dict[str, Any]:
    """quill, bob and carol; quill writes everywhere: memories of every scope, a team, pins, links, queue
    rows, a judgement, a guard, runs, the ledger, usage, surfacings (kept and rolled up), tokens, an OAuth
    grant, a provider key, a capture chunk and allowance."""
    app = app_for(env)
    try:
        return _seed(app)
    finally:
        app.close()


def _seed(app: Any) -> dict[str, Any]:
    now = app.clock()
    with system_tx(app.store, "test-setup", write=True) as tx:
        for uid in (NAME, "bob", "carol"):
            users.add_user(tx, uid)
            users.issue_token(tx, uid)
        create_project(tx, "bob", "shared", kind=ScopeKind.TEAM)
        grant(tx, "bob", TEAM, NAME, "writer")
        grant(tx, "bob", TEAM, "carol", "reader")
        solo = create_project(tx, NAME, "solo", path="/srv/solo").scope

    def write(uid: str, content: str, scope: str, kind: str = "fact") -> str:
        request = RememberRequest(content=content, kind=kind, scope=scope)  # type: ignore[arg-type]
        return remember(app, Caller(uid, client="seed", session_id=f"session-{len(uid)}"), request).id

    ids: dict[str, Any] = {
        "personal": write(NAME, GONE_TEXT, "personal"),
        "core": write(NAME, "Tabs render four columns wide in the terminal", "core", "gotcha"),
        "solo": write(NAME, "The solo service deploys from the main branch", solo, "decision"),
        "forgotten": write(NAME, "The cache warms up in ninety seconds", "personal"),
        "team": write(NAME, "The shared staging cluster restarts every Sunday night", TEAM, "convention"),
        "team_open": write(NAME, "Who owns the shared certificate renewal", TEAM, "open-question"),
        "bob_team": write("bob", "The shared linter configuration lives in the root folder", TEAM),
        "bob_own": write("bob", "Bob keeps release notes in a spreadsheet", "personal"),
        "carol_own": write("carol", "Carol reviews pull requests on Tuesdays", "personal"),
    }
    quill = Caller(NAME, client="seed", session_id="session-5")
    forget(app, quill, ids["forgotten"])
    pin(app, quill, ids["core"])
    pin(app, quill, ids["bob_team"])
    pin(app, Caller("bob", client="seed"), ids["team"])
    link(app, quill, ids["core"], ids["personal"], "relates_to")
    with system_tx(app.store, "test", write=True) as tx:
        for key in ("core", "team"):  # one anchor goes with its memory, the other stays with the team's
            tx.set_anchors(
                ids[key],
                [
                    AnchorRecord(
                        ids[key],
                        "src/ledger.py",
                        "reconcile",
                        Origin.EXPLICIT,
                        AnchorState.UNVERIFIED,
                        None,
                        None,
                        None,
                        None,
                    )
                ],
                app.clock(),
            )
    link(app, quill, ids["team_open"], ids["team"], "relates_to")
    for uid, query in ((NAME, "zanzibarian invoice ledger"), ("bob", "staging cluster restarts")):
        session = f"session-{len(uid)}"
        recall(app, Caller(uid, client="seed", session_id=session), query, scopes_arg=["*"], session_id=session)
    with system_tx(app.store, "test-setup", write=True) as tx:
        tx.add_surfacings(NAME, [ids["personal"]], now - timedelta(days=400), session_id="old", channel="recall")
        tx.add_usage_event(
            user_id=NAME,
            tool="recall",
            client="seed",
            outcome="ok",
            declared_supersede=False,
            at=now - timedelta(days=400),
        )
        tx.add_usage_event(user_id=NAME, tool="recall", client="seed", outcome="ok", declared_supersede=False, at=now)
        tx.attach_session(NAME, "session-5", solo, now)
        tx.rollup_surfacings(before=now - timedelta(days=300))
        tx.rollup_usage_events(before=now - timedelta(days=300))
        tx.add_dispute(
            Dispute(
                id=new_id("dsp"),
                owner=NAME,
                shape=DisputeShape.PAIR,
                verdict="unjudged",
                origin="seed",
                status=DisputeStatus.PENDING,
                memory_a=ids["personal"],
                memory_b=ids["forgotten"],
                created_at=now,
                pair_key=pair_key(ids["personal"], ids["forgotten"]),
            )
        )
        tx.put_judgement(
            pair_key(ids["personal"], ids["core"]),
            Judgement("distinct", 0.9, "Marmalade and tabs are unrelated", "fake"),
            now,
        )
        tx.add_guard(ids["core"], "fake", "kept", now)
        tx.add_portability(
            PortabilityCandidate(new_id("prt"), ids["solo"], NAME, "pending", solo, now, 0.8, "portable", "fake")
        )
        run_id = new_id("run")
        tx.claim_run(Run(run_id, NAME, "scan", RunStatus.RUNNING, False, NAME, now, None, {}))
        tx.finish_run(run_id, RunStatus.COMPLETED, {"pairs": 1}, now)
        tx.add_ledger(
            owner=NAME,
            model="fake",
            purpose="scan",
            input_tokens=10,
            output_tokens=5,
            latency_ms=3,
            outcome="ok",
            run_id=run_id,
            at=now,
        )
        tx.add_chunk(
            CaptureChunk(
                id=new_id("chk"),
                owner=NAME,
                chunk_hash="h1",
                conversation_id="conv-1",
                client="seed",
                scope=f"user.{NAME}",
                transcript="user: the marmalade ledger\n",
                chars=26,
                status=ChunkStatus.PENDING,
                next_attempt_at=now,
                created_at=now,
                updated_at=now,
            )
        )
    budget.set_budget(app.store, NAME, 1000, at=now)
    keys.set_owner_key(app.settings, app.store, NAME, "openai", "sk-test-0123456789abcdef", at=now)
    oauth.register_client(app.store, "client-1", None, {"redirect_uris": ["http://127.0.0.1:9/cb"]}, now)
    code = oauth.approve(
        app.store,
        NAME,
        "client-1",
        redirect_uri="http://127.0.0.1:9/cb",
        redirect_uri_explicit=True,
        code_challenge="x" * 43,
        scopes=["mcp"],
        resource="http://127.0.0.1:8787/mcp",
        config=app.settings.oauth,
        now=now,
    )
    oauth.exchange_code(app.store, code, "client-1", app.settings.oauth, now)
    return ids


# -- reading every row ---------------------------------------------------------------------------


def tables(url: str) -> dict[str, list[tuple[str, ...]]]:
    """Every row of every table, each as a tuple of its values as text (vectors left out)."""
    found: dict[str, list[tuple[str, ...]]] = {}
    if url.startswith("sqlite:"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
            names = [
                r[0]
                for r in conn.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'memories_fts%'"
                )
            ]
            for name in names:
                if name not in SKIPPED_TABLES:
                    found[name] = [_texts(row) for row in conn.execute(f"SELECT * FROM {name}")]
        return found
    with psycopg.connect(url) as conn:
        names = [
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = 'public' AND table_type = 'BASE TABLE'"
            )
        ]
        for name in names:
            if name not in SKIPPED_TABLES:
                found[name] = [_texts(row) for row in conn.execute(f"SELECT * FROM {name}")]  # type: ignore[call-overload]
    return found


def _texts(row: tuple[Any, ...]) -> tuple[str, ...]:
    return tuple("<bytes>" if isinstance(v, bytes | memoryview) else str(v) for v in row)


def naming(rows: dict[str, list[tuple[str, ...]]], text: str) -> dict[str, list[tuple[str, ...]]]:
    return {t: hits for t, found in rows.items() if (hits := [r for r in found if any(text in v for v in r)])}


def others(rows: dict[str, list[tuple[str, ...]]], removed: list[str]) -> dict[str, set[tuple[str, ...]]]:
    """Every row that names neither the user nor a memory of theirs that goes."""
    marks = [NAME, *removed]
    return {t: {r for r in found if not any(m in v for v in r for m in marks)} for t, found in rows.items()}


# -- the tests ---------------------------------------------------------------------------------


def test_deleting_a_user_leaves_no_row_of_theirs_and_keeps_their_team_memories(
    installation: tuple[dict[str, str], str], tmp_path: Path
) -> None:
    env, inspect = installation
    ids = seed(env)
    zm = Zm(env, binary=True)
    before = tables(inspect)
    # The user is in every table but those keyed by memory ids (checked by id below) and the registered clients.
    assert set(before) - set(naming(before, NAME)) == BY_MEMORY_ID - {"links"} | {"oauth_clients"}
    removed_ids = [ids[k] for k in ("personal", "core", "solo", "forgotten")]
    assert {table for memory_id in removed_ids for table in naming(before, memory_id)} >= BY_MEMORY_ID
    export = tmp_path / "quill-export.jsonl"

    done = zm("user", "delete", NAME, "--confirm", NAME, "--export", str(export), "--json")

    assert done.exit_code == 0, done.stderr
    report = done.json()
    alias = report["pseudonym"]
    assert alias.startswith("former-") and NAME not in alias
    assert report["kept_memories"] == 2 and report["removed"]["memories"] == 4
    after = tables(inspect)
    assert naming(after, NAME) == {}
    assert naming(after, "marmalade") == {}  # the removed memory's text, in its judgement and chunk too
    for memory_id in removed_ids:
        assert naming(after, memory_id).keys() <= {"audit"}, memory_id  # only in the id lists of kept audit rows
    # Nobody else's row changed.
    kept_before, kept_after = others(before, removed_ids), others(after, removed_ids)
    for table, rows in kept_before.items():
        assert rows <= kept_after[table], (table, rows - kept_after[table])
    # The team memories stay, written by the pseudonym.
    with _query(inspect) as query:
        owners = dict(query("SELECT id, owner FROM memories"))
        assert owners[ids["team"]] == owners[ids["team_open"]] == alias
        assert {ids["personal"], ids["core"], ids["solo"], ids["forgotten"]}.isdisjoint(owners)
        assert owners[ids["bob_team"]] == "bob"
        audit = [json.loads(p) for (p,) in query("SELECT payload FROM audit WHERE action = 'user.delete'")]
    assert audit == [
        {
            "by": "operator",
            "user": alias,
            "removed": report["removed"],
            "kept_memories": 2,
            "kept_projects": 0,
        }
    ]
    # Teammates still recall them.
    for teammate in ("bob", "carol"):
        found = zm("recall", "staging cluster restarts Sunday", "--scope", TEAM, "--json", env={"ZM_USER": teammate})
        assert found.exit_code == 0, found.stderr
        assert ids["team"] in [h["id"] for h in found.json()["hits"]]
    # The export holds every memory the user had, in every state.
    exported = {json.loads(line)["id"]: json.loads(line) for line in export.read_text().splitlines()}
    mine = {ids[k] for k in ("personal", "core", "solo", "forgotten", "team", "team_open")}
    assert mine | {ids["bob_team"]} == set(exported)
    assert exported[ids["personal"]]["content"] == GONE_TEXT
    assert exported[ids["forgotten"]]["status"] == "invalidated"
    assert oct(export.stat().st_mode & 0o777) == "0o600"


def test_on_sqlite_the_removed_text_is_not_left_in_the_files(tmp_path: Path) -> None:
    env = {"ZM_HOME": str(tmp_path / "home"), "ZM_EMBEDDING_MODEL": "hash:512"}
    seed(env)
    done = Zm(env, binary=True)("user", "delete", NAME, "--confirm", NAME)
    assert done.exit_code == 0, done.stderr
    assert "their export (7 memories) is in" in done.stdout
    database = tmp_path / "home" / "zm.db"
    with sqlite3.connect(database) as conn:
        assert conn.execute("SELECT count(*) FROM memories_fts_vocab WHERE term = 'zanzibarian'").fetchone() == (0,)
    for path in database.parent.glob("zm.db*"):
        if path.is_file():
            assert b"zanzibarian" not in path.read_bytes(), path.name
    assert len(list((tmp_path / "home" / "exports").glob(f"{NAME}-*.jsonl"))) == 1


@pytest.mark.parametrize(
    ("args", "prefix"),
    [
        (("user", "delete", "nobody", "--confirm", "nobody"), "not_found: no user nobody"),
        (("user", "delete", NAME, "--confirm", "bob"), "validation_failed: confirm:"),
        (("user", "delete", NAME, "--confirm", ""), "validation_failed: confirm:"),
        (("user", "delete", NAME), "validation_failed: confirm: pass --confirm quill"),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(
    installation: tuple[dict[str, str], str], tmp_path: Path, args: tuple[str, ...], prefix: str
) -> None:
    env, inspect = installation
    seed(env)
    before = tables(inspect)
    refused = Zm(env, binary=True)(*args, "--export", str(tmp_path / "x.jsonl"))
    assert refused.exit_code == 1
    assert refused.stderr.startswith(prefix), refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert tables(inspect) == before
    assert not (tmp_path / "x.jsonl").exists()


def test_an_export_path_that_exists_is_refused_before_anything_is_deleted(
    installation: tuple[dict[str, str], str], tmp_path: Path
) -> None:
    env, inspect = installation
    seed(env)
    taken = tmp_path / "taken.jsonl"
    taken.write_text("mine\n")
    before = tables(inspect)
    refused = Zm(env, binary=True)("user", "delete", NAME, "--confirm", NAME, "--export", str(taken))
    assert refused.exit_code == 1 and refused.stderr.startswith("validation_failed: export:"), refused.stderr
    assert tables(inspect) == before and taken.read_text() == "mine\n"


class _query:
    """``with _query(url) as q: q(sql)``: rows of a query on either store, past row-level security."""

    def __init__(self, url: str) -> None:
        self.url = url

    def __enter__(self) -> Any:
        if self.url.startswith("sqlite:"):
            self.conn: Any = sqlite3.connect(self.url.removeprefix("sqlite:///"))
        else:
            self.conn = psycopg.connect(self.url)
        return lambda sql: list(self.conn.execute(sql))

    def __exit__(self, *exc: object) -> None:
        self.conn.close()


def answer_prompt(env: dict[str, str], typed: str, export: Path) -> tuple[int, str]:
    """``zm user delete quill`` on a terminal (a pseudo-terminal): type ``typed`` at its prompt.
    (exit code, what the terminal showed)."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [str(ZM), "user", "delete", NAME, "--export", str(export)],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env=environ(env),
    )
    os.close(terminal)
    shown = b""
    deadline = time.monotonic() + 120
    while b"Type the name to confirm" not in shown and time.monotonic() < deadline:
        ready, _, _ = select.select([controller], [], [], 1)
        if ready:
            shown += os.read(controller, 4096)
    os.write(controller, typed.encode() + b"\n")
    code = process.wait(timeout=300)
    while select.select([controller], [], [], 0.2)[0]:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        shown += chunk
    os.close(controller)
    return code, shown.decode(errors="replace")


def test_on_a_terminal_the_name_is_asked_for_and_a_wrong_one_changes_nothing(tmp_path: Path) -> None:
    env = {"ZM_HOME": str(tmp_path / "home"), "ZM_EMBEDDING_MODEL": "hash:512"}
    seed(env)
    inspect = f"sqlite:///{tmp_path / 'home' / 'zm.db'}"
    before = tables(inspect)
    code, shown = answer_prompt(env, "bob", tmp_path / "wrong.jsonl")
    assert code == 1 and "validation_failed: confirm:" in shown, shown
    assert tables(inspect) == before and not (tmp_path / "wrong.jsonl").exists()
    code, shown = answer_prompt(env, NAME, tmp_path / "right.jsonl")
    assert code == 0 and f"deleted {NAME}" in shown, shown
    assert naming(tables(inspect), NAME) == {}
    assert (tmp_path / "right.jsonl").exists()
