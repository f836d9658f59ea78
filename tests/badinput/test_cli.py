"""Every ``zm`` command refuses bad input in one line with its stable prefix, and changes nothing.

The table runs the CLI in process (tests/cli/harness.py: the same parsing,
error handling and exit codes as the binary, ~100 times faster); a sample also
runs as the real ``zm`` binary. Refusals of zero-memory itself exit 1 with one
line on stderr that starts with the code; usage errors (a missing argument,
an unknown option, a value of the wrong type) are Click's, exit 2. Either
way the database is unchanged (``snapshot``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.badinput.snapshot import changed, snapshot
from tests.badinput.table import AWS_KEY_ID, GITHUB_TOKEN, RTL
from tests.cli.harness import Result, app_for, commands, run
from zero_memory.access import users
from zero_memory.access.caller import Caller
from zero_memory.access.projects import create_project
from zero_memory.app import App
from zero_memory.conflicts.choice import KeepBoth
from zero_memory.conflicts.resolve import resolve_conflict
from zero_memory.domain.records import Dispute, DisputeShape, DisputeStatus, PortabilityCandidate, pair_key
from zero_memory.ids import new_id
from zero_memory.memory.models import RememberRequest
from zero_memory.memory.write import remember

MISSING = {
    "memory": "mem_01zzzzzzzzzzzzzzzzzzzzzzzz",
    "dispute": "dsp_01zzzzzzzzzzzzzzzzzzzzzzzz",
    "candidate": "prt_01zzzzzzzzzzzzzzzzzzzzzzzz",
    "run": "run_01zzzzzzzzzzzzzzzzzzzzzzzz",
}
USAGE = 2
REFUSED = 1


def environment(home: Path) -> dict[str, str]:
    # Refusals embed nothing; the bundled model costs seconds.
    return {"ZM_HOME": str(home), "ZM_USER": "alice", "ZM_EMBEDDING_MODEL": "hash:512", "COLUMNS": "200"}


@dataclass
class Shell:
    home: Path
    ids: dict[str, str]

    @property
    def database(self) -> Path:
        return self.home / "zm.db"

    def run(self, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
        """``zm ARGS`` as alice, in process: (exit code, stdout, stderr)."""
        done = self.zm(*args, stdin=stdin)
        return done.exit_code, done.stdout, done.stderr

    def zm(self, *args: str, stdin: str | None = None, binary: bool = False) -> Result:
        return run([self.resolve(a) for a in args], env=environment(self.home), input=stdin, binary=binary)

    def resolve(self, arg: str) -> str:
        return self.ids.get(arg[1:], arg) if arg.startswith("@") else arg


def _seed(home: Path) -> dict[str, str]:
    app = app_for(environment(home))
    try:
        return _seed_with(app, home)
    finally:
        app.close()


def _seed_with(app: App, home: Path) -> dict[str, str]:
    with app.store.tx(write=True) as tx:
        users.add_user(tx, "alice", is_local=True)
        users.add_user(tx, "bob")
    ids = {}

    def write(owner: str, content: str, kind: str = "fact") -> str:
        result = remember(
            app,
            Caller(owner, client="seed"),
            RememberRequest(
                content=content,
                kind=kind,  # type: ignore[arg-type]
                scope="personal",
            ),
        )
        return result.id

    ids["fact"] = write("alice", "The release checklist lives in docs/release.md")
    ids["task"] = write("alice", "Rotate the staging TLS certificate", "task")
    ids["a"], ids["b"] = write("alice", "The staging database is green"), write("alice", "The api port is 8080")
    ids["c"], ids["d"] = write("alice", "Deploys happen on Fridays"), write("alice", "The linter is ruff")
    ids["bob_fact"] = write("bob", "Bob's build runs on the blue runner")
    now = app.clock()

    def dispute(owner: str, a: str, b: str | None) -> str:
        row = Dispute(
            id=new_id("dsp"),
            owner=owner,
            shape=DisputeShape.PAIR if b else DisputeShape.SINGLE,
            verdict="unjudged" if b else "challenged",
            origin="seed",
            status=DisputeStatus.PENDING,
            memory_a=a,
            memory_b=b,
            created_at=now,
            pair_key=pair_key(a, b) if b else None,
        )
        with app.store.tx(write=True) as tx:
            tx.add_dispute(row)
        return row.id

    ids["pending"] = dispute("alice", ids["a"], ids["b"])
    ids["resolved"] = dispute("alice", ids["c"], ids["d"])
    resolve_conflict(app, Caller("alice", client="seed"), ids["resolved"], KeepBoth())
    ids["bob_single"] = dispute("bob", ids["bob_fact"], None)
    with app.store.tx(write=True) as tx:
        ids["project"] = create_project(tx, "alice", "billing", path="/srv/billing").scope

    def propose(owner: str, memory_id: str, status: str) -> str:
        candidate = PortabilityCandidate(
            id=new_id("prt"),
            memory_id=memory_id,
            owner=owner,
            status=status,
            original_scope=f"user.{owner}",
            created_at=now,
        )
        with app.store.tx(write=True) as tx:
            tx.add_portability(candidate)
        return candidate.id

    ids["dismissed"] = propose("alice", ids["task"], "dismissed")
    ids["bob_candidate"] = propose("bob", ids["bob_fact"], "pending")
    ids.update({f"missing_{kind}": value for kind, value in MISSING.items()})
    ids["database_url"] = f"sqlite:///{home / 'zm.db'}"
    ids["database_alias"] = f"sqlite:///{home}/./zm.db"
    ids["database_path"] = str(home / "zm.db")
    return ids


@pytest.fixture(scope="module")
def shell(tmp_path_factory: pytest.TempPathFactory) -> Shell:
    home = tmp_path_factory.mktemp("zm-cli-badinput")
    return Shell(home, _seed(home))


def notes(tmp: Path, name: str, *records: object) -> str:
    path = tmp / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
    return str(path)


ELEVEN = [arg for i in range(11) for arg in ("--supersedes", f"mem_{i:026d}")]
PERSONAL = ("--kind", "fact", "--scope", "personal")

# id -> (argv, exit code, stderr prefix for exit 1 / a fragment of Click's message for exit 2, user)
ROWS: dict[str, tuple[tuple[str, ...], int, str]] = {
    # remember
    "remember/no-text": (("remember", *PERSONAL), USAGE, "Missing argument"),
    "remember/no-kind": (("remember", "A note", "--scope", "personal"), USAGE, "Missing option"),
    "remember/unknown-kind": (("remember", "A note", "--kind", "rumour"), USAGE, "Invalid value"),
    "remember/anchor-outside-the-repository": (
        ("remember", "A note", "--kind", "fact", "--scope", "personal", "--anchor", "../etc/passwd::x"),
        REFUSED,
        "validation_failed: anchors: '../etc/passwd' must be a path relative to the repository's root",
    ),
    "remember/unknown-option": (("remember", "A note", *PERSONAL, "--tags", "x"), USAGE, "No such option"),
    "remember/empty": (("remember", "", *PERSONAL), REFUSED, "validation_failed: content: must not be empty"),
    "remember/blank": (("remember", " \t ", *PERSONAL), REFUSED, "validation_failed: content: must not be empty"),
    "remember/oversized": (("remember", "x" * 16_001, *PERSONAL), REFUSED, "validation_failed: content: 16001"),
    "remember/secret": (
        ("remember", f"token {GITHUB_TOKEN}", *PERSONAL),
        REFUSED,
        "validation_failed: secret_content_rejected: content github_token",
    ),
    "remember/secret-in-project": (
        ("remember", "A note", "--kind", "fact", "--project", AWS_KEY_ID),
        REFUSED,
        "validation_failed: secret_content_rejected: project_hint",
    ),
    "remember/lone-surrogate": (
        ("remember", "bad byte \udcff here", *PERSONAL),
        REFUSED,
        "validation_failed: content: is not valid Unicode",
    ),
    "remember/unknown-scope": (
        ("remember", "A note", "--kind", "fact", "--scope", "proj.nope"),
        REFUSED,
        "validation_failed: scope:",
    ),
    "remember/another-users-scope": (
        ("remember", "A note", "--kind", "fact", "--scope", "user.bob"),
        REFUSED,
        "validation_failed: scope:",
    ),
    "remember/no-target": (
        ("remember", "A note", "--kind", "fact"),
        REFUSED,
        "validation_failed: scope_target_required:",
    ),
    "remember/unresolvable-project": (
        ("remember", "A note", "--kind", "fact", "--project", " "),
        REFUSED,
        "validation_failed: project_hint_unresolvable:",
    ),
    "remember/eleven-supersedes": (("remember", "A note", *PERSONAL, *ELEVEN), REFUSED, "validation_failed: links:"),
    "remember/provisional-supersede": (
        ("remember", "A note", *PERSONAL, "--provisional", "--supersedes", "@fact"),
        REFUSED,
        "validation_failed: links:",
    ),
    "remember/empty-supersede": (
        ("remember", "A note", *PERSONAL, "--supersedes", ""),
        REFUSED,
        "validation_failed: dst:",
    ),
    # recall
    "recall/no-query": (("recall",), USAGE, "Missing argument"),
    "recall/limit-not-a-number": (("recall", "q", "--limit", "ten"), USAGE, "Invalid value"),
    "recall/limit-zero": (("recall", "q", "--limit", "0"), REFUSED, "validation_failed: limit"),
    "recall/limit-over-50": (("recall", "q", "--limit", "51"), REFUSED, "validation_failed: limit"),
    "recall/unknown-kind": (("recall", "q", "--kind", "rumour"), USAGE, "Invalid value"),
    "recall/another-users-scope": (("recall", "q", "--scope", "user.bob"), REFUSED, "validation_failed: scope:"),
    "recall/empty": (("recall", ""), REFUSED, "validation_failed: query: must not be empty"),
    "recall/oversized": (("recall", "q" * 4_001), REFUSED, "validation_failed: query:"),
    "recall/secret": (("recall", GITHUB_TOKEN), REFUSED, "validation_failed: secret_content_rejected: query"),
    # get / forget / restore / close-loop / link / move
    "get/no-id": (("get",), USAGE, "Missing argument"),
    "get/missing": (("get", "@missing_memory"), REFUSED, "not_found: no memory"),
    "get/extra-argument": (("get", "@fact", "@task"), USAGE, "unexpected extra argument"),
    "get/rtl-id": (("get", f"{RTL}mem_x"), REFUSED, "not_found:"),
    "forget/missing": (("forget", "@missing_memory"), REFUSED, "not_found: no memory"),
    "forget/secret-reason": (
        ("forget", "@fact", "--reason", f"leaked {GITHUB_TOKEN}"),
        REFUSED,
        "validation_failed: secret_content_rejected: reason",
    ),
    "restore/missing": (("restore", "@missing_memory"), REFUSED, "not_found: no memory"),
    "reaffirm/missing": (("reaffirm", "@missing_memory"), REFUSED, "not_found: no memory"),
    "reaffirm/no-freshness-budget": (("reaffirm", "@task"), REFUSED, "validation_failed: id:"),
    "close-loop/missing": (("close-loop", "@missing_memory"), REFUSED, "not_found: no memory"),
    "close-loop/not-a-loop": (("close-loop", "@fact"), REFUSED, "validation_failed: id:"),
    "close-loop/secret-note": (
        ("close-loop", "@task", "--note", GITHUB_TOKEN),
        REFUSED,
        "validation_failed: secret_content_rejected: note",
    ),
    "link/missing": (("link", "@fact", "@missing_memory"), REFUSED, "not_found: no memory"),
    "link/self": (("link", "@fact", "@fact"), REFUSED, "validation_failed: dst:"),
    "link/unknown-type": (("link", "@fact", "@task", "--type", "supersedes"), REFUSED, "validation_failed: type:"),
    "move/no-ids": (("move", "--scope", "core"), USAGE, "Missing argument"),
    "move/no-target": (("move", "@fact"), REFUSED, "validation_failed:"),
    "move/two-targets": (("move", "@fact", "--scope", "core", "--project", "/srv/x"), REFUSED, "validation_failed:"),
    "move/unknown-scope": (("move", "@fact", "--scope", "proj.nope"), REFUSED, "validation_failed: scope:"),
    "move/101-ids": (("move", *["@fact"] * 101, "--scope", "core"), REFUSED, "validation_failed: ids:"),
    # context / loops / pin / unpin / setup
    "context/limit-zero": (("context", "--project", "/srv/api", "--limit", "0"), REFUSED, "validation_failed: limit"),
    "context/secret-topic": (
        ("context", "--project", "/srv/api", "--topic", GITHUB_TOKEN),
        REFUSED,
        "validation_failed: secret_content_rejected: topic",
    ),
    "loops/limit-zero": (("loops", "--limit", "0"), REFUSED, "validation_failed: limit"),
    "loops/unknown-project": (("loops", "--project", "/srv/nowhere"), REFUSED, "validation_failed: project_hint"),
    "pin/missing": (("pin", "@missing_memory"), REFUSED, "not_found: no memory"),
    "pin/no-id": (("pin",), USAGE, "Missing argument"),
    "unpin/missing": (("unpin", "@missing_memory"), REFUSED, "not_found: no memory"),
    "setup/unknown-client": (("setup", "vim"), REFUSED, "validation_failed: client:"),
    "setup/no-client": (("setup",), USAGE, "Missing argument"),
    # verify
    "verify/not-a-repository": (("verify", "/"), REFUSED, "validation_failed: / is not inside a git repository"),
    "verify/not-a-number": (("verify", "/", "--seconds", "soon"), USAGE, "Invalid value"),
    # run where the tests run (a git checkout): the missing token is refused before anything is asked
    "verify/server-without-token": (
        ("verify", "--server", "http://127.0.0.1:9"),
        REFUSED,
        "validation_failed: --server needs --token",
    ),
    # import / export
    "import/no-path": (("import",), USAGE, "Missing argument"),
    "export/unknown-format": (("export", "--format", "xml"), REFUSED, "validation_failed: format:"),
    # user
    "user-add/bad-name": (("user", "add", "Not A Name"), REFUSED, "validation_failed: name:"),
    "user-add/existing": (("user", "add", "bob"), REFUSED, "conflict:"),
    "user-add/no-name": (("user", "add"), USAGE, "Missing argument"),
    "user-list/unknown-option": (("user", "list", "--all"), USAGE, "No such option"),
    "user-token/unknown-user": (("user", "token", "nobody"), REFUSED, "not_found: no user nobody"),
    "user-delete/unknown-user": (("user", "delete", "nobody", "--confirm", "nobody"), REFUSED, "not_found: no user"),
    "user-delete/wrong-confirmation": (("user", "delete", "bob", "--confirm", "alice"), REFUSED, "validation_failed:"),
    "user-delete/no-confirmation": (("user", "delete", "bob"), REFUSED, "validation_failed: confirm:"),
    "user-delete/no-name": (("user", "delete"), USAGE, "Missing argument"),
    "user-oauth-list/unknown-user": (("user", "oauth", "list", "nobody"), REFUSED, "not_found: no user nobody"),
    "user-oauth-list/no-name": (("user", "oauth", "list"), USAGE, "Missing argument"),
    "user-oauth-revoke/nothing-named": (
        ("user", "oauth", "revoke", "alice"),
        REFUSED,
        "validation_failed: name exactly",
    ),
    "user-oauth-revoke/two-named": (
        ("user", "oauth", "revoke", "alice", "grant_x", "--all"),
        REFUSED,
        "validation_failed: name exactly",
    ),
    "user-oauth-revoke/unknown-grant": (
        ("user", "oauth", "revoke", "alice", "grant_01zzzzzzzzzzzzzzzzzzzzzzzz"),
        REFUSED,
        "not_found: no authorized client of alice",
    ),
    "user-oauth-revoke/a-secret-for-an-id": (
        ("user", "oauth", "revoke", "alice", GITHUB_TOKEN),
        REFUSED,
        "not_found: no authorized client of alice",
    ),
    "user-oauth-revoke/unknown-client": (
        ("user", "oauth", "revoke", "alice", "--client", AWS_KEY_ID),
        REFUSED,
        "not_found: no authorized client of alice",
    ),
    "user-oauth-revoke/unknown-user": (("user", "oauth", "revoke", "nobody", "--all"), REFUSED, "not_found: no user"),
    "user-key-set/key-on-the-command-line": (
        ("user", "key", "set", "--provider", "openai", "sk-live-0123456789"),
        REFUSED,
        "validation_failed:",
    ),
    "user-key-set/unknown-provider": (("user", "key", "set", "--provider", "mistral"), REFUSED, "validation_failed:"),
    "user-key-set/unknown-user": (
        ("user", "key", "set", "--provider", "openai", "--user", "nobody"),
        REFUSED,
        "not_found:",
    ),
    "user-key-show/unknown-provider": (("user", "key", "show", "--provider", "mistral"), REFUSED, "validation_failed:"),
    "user-key-clear/unknown-provider": (
        ("user", "key", "clear", "--provider", "mistral"),
        REFUSED,
        "validation_failed:",
    ),
    # project
    "project-create/bad-slug": (("project", "create", "Not a slug!"), REFUSED, "validation_failed:"),
    "project-create/no-slug": (("project", "create"), USAGE, "Missing argument"),
    "project-grant/unknown-role": (
        ("project", "grant", "@project", "bob", "owner"),
        REFUSED,
        "validation_failed: role",
    ),
    "project-grant/unknown-scope": (("project", "grant", "proj.alice.nope", "bob", "reader"), REFUSED, "not_found:"),
    "project-grant/unknown-user": (("project", "grant", "@project", "nobody", "reader"), REFUSED, "not_found:"),
    "project-list/unknown-option": (("project", "list", "--all"), USAGE, "No such option"),
    # db
    "db-migrate/unknown-option": (("db", "migrate", "--to", "3"), USAGE, "No such option"),
    "db-reindex/unknown-option": (("db", "reindex", "--model", "x"), USAGE, "No such option"),
    "db-copy/no-destination": (("db", "copy", "@database_url"), USAGE, "Missing argument"),
    "db-copy/unknown-scheme": (("db", "copy", "@database_url", "mysql://db/zm"), REFUSED, "validation_failed: DST_URL"),
    "db-copy/onto-itself": (("db", "copy", "@database_url", "@database_url"), REFUSED, "validation_failed: DST_URL"),
    "db-copy/onto-itself-spelt-otherwise": (
        ("db", "copy", "@database_url", "@database_alias"),
        REFUSED,
        "conflict: the destination database is not empty",
    ),
    "db-rollup/unknown-option": (("db", "rollup", "--days", "3"), USAGE, "No such option"),
    "db-backup/no-path": (("db", "backup"), USAGE, "Missing argument"),
    "db-backup/onto-the-store": (("db", "backup", "@database_path"), REFUSED, "validation_failed: PATH:"),
    "db-backup/no-directory": (("db", "backup", "/nonexistent/dir/zm.db"), REFUSED, "validation_failed: PATH:"),
    "db-restore/no-path": (("db", "restore"), USAGE, "Missing argument"),
    "db-restore/missing-file": (("db", "restore", "/nonexistent/zm.db"), REFUSED, "not_found: no backup file"),
    "db-restore/the-store-itself": (("db", "restore", "@database_path"), REFUSED, "validation_failed: PATH:"),
    "db-copy/no-source": (
        ("db", "copy", "sqlite:////nonexistent/zm.db", "sqlite:////tmp/zm-copy-never.db"),
        REFUSED,
        "validation_failed: SRC_URL",
    ),
    # hygiene
    "hygiene-scan/unknown-owner": (("hygiene", "scan", "--owner", "nobody"), REFUSED, "not_found: no user nobody"),
    "hygiene-retro/no-max": (
        (
            "hygiene",
            "retro",
        ),
        USAGE,
        "Missing option",
    ),
    "hygiene-retro/max-not-a-number": (("hygiene", "retro", "--max", "many"), USAGE, "Invalid value"),
    "hygiene-retro/max-zero": (("hygiene", "retro", "--max", "0"), REFUSED, "validation_failed:"),
    "hygiene-retro/unknown-owner": (
        ("hygiene", "retro", "--max", "5", "--owner", "nobody"),
        REFUSED,
        "not_found: no user nobody",
    ),
    "hygiene-retro/bad-cursor": (
        ("hygiene", "retro", "--max", "5", "--after", "not-a-cursor"),
        REFUSED,
        "validation_failed:",
    ),
    "hygiene-undo/missing-run": (("hygiene", "undo", "@missing_run"), REFUSED, "not_found:"),
    "hygiene-runs/limit-not-a-number": (("hygiene", "runs", "--limit", "all"), USAGE, "Invalid value"),
    # conflicts
    "conflicts-list/unknown-status": (("conflicts", "list", "--status", "open"), REFUSED, "validation_failed:"),
    "conflicts-list/unknown-shape": (("conflicts", "list", "--shape", "triple"), REFUSED, "validation_failed:"),
    "conflicts-list/limit-zero": (("conflicts", "list", "--limit", "0"), REFUSED, "validation_failed:"),
    "conflicts-resolve/nothing": (("conflicts", "resolve"), REFUSED, "validation_failed:"),
    "conflicts-resolve/missing": (
        ("conflicts", "resolve", "@missing_dispute", "--keep-both"),
        REFUSED,
        "not_found: no dispute",
    ),
    "conflicts-resolve/already-resolved": (
        ("conflicts", "resolve", "@resolved", "--keep-both"),
        REFUSED,
        "conflict: already_resolved:",
    ),
    "conflicts-resolve/no-choice": (("conflicts", "resolve", "@pending"), REFUSED, "validation_failed:"),
    "conflicts-resolve/accept-without-a-proposal": (
        ("conflicts", "resolve", "@pending", "--accept"),
        REFUSED,
        "validation_failed: accept:",
    ),
    "conflicts-resolve/two-choices": (
        ("conflicts", "resolve", "@pending", "--keep-both", "--winner", "@a"),
        REFUSED,
        "validation_failed:",
    ),
    "conflicts-resolve/winner-outside": (
        ("conflicts", "resolve", "@pending", "--winner", "@fact"),
        REFUSED,
        "validation_failed:",
    ),
    "conflicts-resolve/oversized-merge": (
        ("conflicts", "resolve", "@pending", "--merge", "m" * 16_001),
        REFUSED,
        "validation_failed: merge:",
    ),
    "conflicts-resolve/secret-merge": (
        ("conflicts", "resolve", "@pending", "--merge", GITHUB_TOKEN),
        REFUSED,
        "validation_failed: secret_content_rejected: merge",
    ),
    "conflicts-resolve/unknown-policy": (
        ("conflicts", "resolve", "--policy", "coin_flip"),
        REFUSED,
        "validation_failed: name:",
    ),
    # portability
    "portability-list/unknown-status": (("portability", "list", "--status", "open"), REFUSED, "validation_failed:"),
    "portability-approve/missing": (
        ("portability", "approve", "@missing_candidate"),
        REFUSED,
        "not_found: no portability candidate",
    ),
    "portability-approve/dismissed": (("portability", "approve", "@dismissed"), REFUSED, "conflict: already_resolved:"),
    "portability-dismiss/no-id": (("portability", "dismiss"), USAGE, "Missing argument"),
    # capture
    "ingest/no-path": (("ingest",), USAGE, "Missing argument"),
    "ingest/missing-file": (("ingest", "/nonexistent/talk.txt", "--project", "api"), REFUSED, "not_found: no file"),
    "ingest/stdin-without-a-conversation": (
        ("ingest", "-", "--project", "api"),
        REFUSED,
        "validation_failed: --conversation: required",
    ),
    "hook-claude-code/not-json": (("hook", "claude-code"), REFUSED, "validation_failed: the hook input is not JSON"),
    "hook-codex/not-json": (("hook", "codex", "{turn"), REFUSED, "validation_failed: the hook input is not JSON"),
    "capture-list/unknown-status": (("capture", "list", "--status", "open"), USAGE, "Invalid value"),
    "capture-drain/unknown-option": (("capture", "drain", "--all"), USAGE, "No such option"),
    "capture-log/not-a-number": (("capture", "log", "-n", "lots"), USAGE, "Invalid value"),
    "user-budget-set/not-a-number": (("user", "budget", "set", "lots"), USAGE, "Invalid value"),
    "user-budget-set/unknown-user": (("user", "budget", "set", "10", "--user", "nobody"), REFUSED, "not_found:"),
    "user-budget-show/unknown-user": (("user", "budget", "show", "--user", "nobody"), REFUSED, "not_found:"),
    "user-budget-clear/unknown-user": (("user", "budget", "clear", "--user", "nobody"), REFUSED, "not_found:"),
    # judge, serve, mcp, version
    "judge-eval/no-file": (
        (
            "judge",
            "eval",
        ),
        USAGE,
        "Missing argument",
    ),
    "judge-eval/price-negative": (("judge", "eval", "pairs.jsonl", "--price-in", "-1"), USAGE, "Invalid value"),
    "serve/port-not-a-number": (("serve", "--port", "http"), USAGE, "Invalid value"),
    "serve/port-out-of-range": (("serve", "--port", "70000"), USAGE, "Invalid value"),
    "mcp/unknown-option": (("mcp", "--port", "1"), USAGE, "No such option"),
    "version/unknown-option": (("version", "--short"), USAGE, "No such option"),
}

# Another user's object: the same answer as a missing one, ids aside.
FOREIGN: dict[str, tuple[str, ...]] = {
    "get": ("get", "@bob_fact"),
    "forget": ("forget", "@bob_fact"),
    "restore": ("restore", "@bob_fact"),
    "reaffirm": ("reaffirm", "@bob_fact"),
    "close-loop": ("close-loop", "@bob_fact"),
    "pin": ("pin", "@bob_fact"),
    "unpin": ("unpin", "@bob_fact"),
    "link": ("link", "@fact", "@bob_fact"),
    "conflicts-resolve": ("conflicts", "resolve", "@bob_single", "--retire"),
    "portability-approve": ("portability", "approve", "@bob_candidate"),
    "portability-dismiss": ("portability", "dismiss", "@bob_candidate"),
}
TWINS = {"@bob_fact": "@missing_memory", "@bob_single": "@missing_dispute", "@bob_candidate": "@missing_candidate"}


def refused(shell: Shell, args: tuple[str, ...], stdin: str | None = None) -> tuple[int, str, str]:
    before = snapshot(shell.database)
    code, out, err = shell.run(*args, stdin=stdin)
    assert changed(before, snapshot(shell.database)) == [], f"zm {' '.join(args)[:80]} changed the database"
    return code, out, err


def leaves() -> Iterator[str]:
    """Every leaf command's path, ``user-key-set`` for ``zm user key set``."""
    return ("-".join(path) for path, command in commands() if not hasattr(command, "commands"))


def test_the_table_covers_every_command() -> None:
    assert set(leaves()) == {key.split("/")[0] for key in ROWS}


@pytest.mark.parametrize("key", list(ROWS))
def test_bad_input_to_a_command_is_refused_and_changes_nothing(shell: Shell, key: str) -> None:
    args, exit_code, expected = ROWS[key]
    code, out, err = refused(shell, args)
    assert code == exit_code, (code, out, err)
    if exit_code == REFUSED:
        assert err.startswith(expected) and err.count("\n") == 1, err
        assert out == ""
    else:
        assert expected in err and "Usage: " in err, err
    assert GITHUB_TOKEN not in out + err and AWS_KEY_ID not in out + err


@pytest.mark.parametrize("key", list(FOREIGN))
def test_another_users_id_answers_as_a_missing_one(shell: Shell, key: str) -> None:
    args = FOREIGN[key]
    theirs = refused(shell, args)
    missing = refused(shell, tuple(TWINS.get(a, a) for a in args))
    ids = [shell.resolve(a) for a in (*TWINS, *TWINS.values())]

    def same(err: str) -> str:
        for real in ids:
            err = err.replace(real, "<id>")
        return err

    assert theirs[0] == missing[0] == REFUSED
    assert same(theirs[2]) == same(missing[2]) and theirs[2].startswith("not_found:")


def test_moving_another_users_memory_fails_as_a_missing_one(shell: Shell) -> None:
    _, theirs, _ = refused(shell, ("move", "@bob_fact", "--scope", "core", "--json"))
    _, missing, _ = refused(shell, ("move", "@missing_memory", "--scope", "core", "--json"))
    assert json.loads(theirs)["failed"][0]["error"].replace(shell.ids["bob_fact"], "<id>") == json.loads(missing)[
        "failed"
    ][0]["error"].replace(MISSING["memory"], "<id>")


@pytest.mark.parametrize(
    ("name", "records", "problem"),
    [
        ("nul.jsonl", [{"content": "a\u0000b", "kind": "fact"}], "validation_failed: content: contains a NUL"),
        ("surrogate.jsonl", ['{"content": "half \\ud800 pair", "kind": "fact"}'], "validation_failed: content:"),
        ("oversized.jsonl", [{"content": "x" * 16_001, "kind": "fact"}], "validation_failed: content:"),
        ("kind.jsonl", [{"content": "A note", "kind": "rumour"}], "validation_failed"),
        (
            "secret.jsonl",
            [{"content": f"token {GITHUB_TOKEN}", "kind": "fact"}],
            "validation_failed: secret_content_rejected: content",
        ),
        (
            "another-users-scope.jsonl",
            [{"content": "A note", "kind": "fact", "scope": "user.bob"}],
            "validation_failed: scope:",
        ),
        ("not-json.jsonl", ["{not json"], "validation_failed"),
        ("wrong-type.jsonl", [{"content": 42, "kind": "fact"}], "validation_failed"),
    ],
)
def test_an_import_of_only_bad_records_imports_nothing_and_says_why(
    shell: Shell, tmp_path: Path, name: str, records: list[object], problem: str
) -> None:
    path = notes(tmp_path, name, *records)
    scope = () if "scope" in json.dumps(records) else ("--scope", "personal")
    code, out, err = refused(shell, ("import", path, *scope, "--json"))
    assert code == 0, "with --json the report is the answer (tests/cli: a partial import exits 0)"
    report = json.loads(out)
    assert report["imported"] == 0 and len(report["failed"]) == 1
    assert report["failed"][0]["error"].startswith(problem), report
    assert GITHUB_TOKEN not in out + err
    code, out, err = refused(shell, ("import", path, *scope))
    assert code == REFUSED and problem.split(":")[0] in out


def test_a_provider_key_that_is_empty_or_oversized_is_refused(shell: Shell) -> None:
    for stdin in ("", "k" * 5_000):
        code, _, err = refused(shell, ("user", "key", "set", "--provider", "openai"), stdin=stdin)
        assert code == REFUSED and err.startswith("validation_failed:") and err.count("\n") == 1, err


def test_a_judge_eval_of_a_bad_file_is_refused(shell: Shell, tmp_path: Path) -> None:
    for records in (["{not json"], [{"a": "x", "b": "y", "label": "same"}], []):
        path = notes(tmp_path, "pairs.jsonl", *records)
        code, _, err = refused(shell, ("judge", "eval", path))
        assert code == REFUSED and err.startswith("validation_failed:"), err
    code, _, err = refused(shell, ("judge", "eval", str(tmp_path / "absent.jsonl")))
    assert code in (USAGE, REFUSED)
    assert err.startswith("validation_failed:") or "does not exist" in err


SUBPROCESS_SAMPLE = ["conflicts-resolve/already-resolved", "remember/unknown-kind"]


def test_the_real_binary_answers_the_same(shell: Shell) -> None:
    """A sample as subprocesses (in parallel: each start costs seconds): the same exit code and line as in process.

    The last one passes a byte that is not UTF-8 (the lone surrogate in its argument reaches the process as
    that byte); Python hands it to the CLI as a lone surrogate.
    """
    argvs = [ROWS[key][0] for key in SUBPROCESS_SAMPLE]
    argvs.append(("remember", "bad byte \udcff here", "--kind", "fact", "--scope", "personal"))

    def real_binary(argv: tuple[str, ...]) -> Result:
        return shell.zm(*argv, binary=True)

    before = snapshot(shell.database)
    with ThreadPoolExecutor(max_workers=len(argvs)) as pool:
        *sample, undecodable = list(pool.map(real_binary, argvs))
    assert changed(before, snapshot(shell.database)) == []
    for key, done in zip(SUBPROCESS_SAMPLE, sample, strict=True):
        args, exit_code, expected = ROWS[key]
        stderr = done.stderr
        assert done.exit_code == exit_code, (key, stderr)
        if exit_code == REFUSED:
            assert stderr.startswith(expected) and stderr.count("\n") == 1, (key, stderr)
            assert stderr == shell.run(*args)[2]
    assert undecodable.exit_code == REFUSED
    assert undecodable.stderr.startswith("validation_failed: content: is not valid Unicode"), undecodable.stderr
