"""``zm user key``: an owner's provider key, stored encrypted, used for their judge calls only.

The CLI runs as the real binary (tests/cli/harness.py) on a real SQLite file; the key goes in on stdin,
never on the command line. The checks that matter: the plaintext is in no
file of the data directory (database, WAL), in no output, in no log line; the
owner's calls carry it and nobody else's do; a changed ZM_SECRET_KEY is a
clear ``unavailable`` that leaks nothing.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.cli.harness import Result, run
from tests.fakes.openai_server import FakeOpenAIServer
from tests.judge.conftest import OWNER_KEY, PAIR, SERVER_KEY, STRONG
from zero_memory import crypto
from zero_memory.app import App
from zero_memory.bootstrap import build_app
from zero_memory.judge.base import Judged
from zero_memory.judge.keys import key_status, set_owner_key
from zero_memory.judge.owners import judge_for
from zero_memory.settings import Settings

SECRET = "test-secret-key-0123456789abcdef"
OTHER_SECRET = "another-secret-key-fedcba9876543210"


class Zm:
    """``zm`` as a user runs it, on one data directory."""

    def __init__(self, home: Path, **env: str) -> None:
        self.home = home
        self.env = {"ZM_HOME": str(home), "ZM_USER": "alice", "ZM_JUDGE_PROVIDER": "openai", "COLUMNS": "200", **env}

    def __call__(self, *args: str, stdin: str = "", **env: str) -> Result:
        return run(args, env={**self.env, **env}, input=stdin, binary=True)


@pytest.fixture
def zm(tmp_path: Path) -> Zm:
    return Zm(tmp_path / "zm-home", ZM_SECRET_KEY=SECRET)


def files_under(home: Path) -> dict[str, bytes]:
    return {str(p.relative_to(home)): p.read_bytes() for p in home.rglob("*") if p.is_file()}


def stored_ciphertext(home: Path, user: str = "alice", provider: str = "openai") -> str | None:
    if not (home / "zm.db").exists():
        return None
    with sqlite3.connect(home / "zm.db") as db:
        row = db.execute(
            "SELECT ciphertext FROM provider_keys WHERE user_id = ? AND provider = ?", (user, provider)
        ).fetchone()
    return None if row is None else str(row[0])


# -- set, show, clear ---------------------------------------------------------------


def test_set_reads_the_key_from_stdin_and_stores_only_its_ciphertext(zm: Zm) -> None:
    done = zm("user", "key", "set", stdin=OWNER_KEY + "\n")
    assert done.exit_code == 0, done.stderr
    assert done.stdout.startswith("stored the openai key of alice (ending ghij), encrypted")
    assert OWNER_KEY not in done.stdout + done.stderr
    ciphertext = stored_ciphertext(zm.home)
    assert ciphertext is not None and OWNER_KEY not in ciphertext
    assert crypto.decrypt(SECRET, ciphertext) == OWNER_KEY
    for name, content in files_under(zm.home).items():
        assert OWNER_KEY.encode() not in content, name


def test_show_says_whether_a_key_is_set_and_its_last_four_characters_only(zm: Zm) -> None:
    assert zm("user", "key", "show").stdout.strip() == "alice has no openai key: their judge calls use the server's"
    zm("user", "key", "set", stdin=OWNER_KEY)
    shown = zm("user", "key", "show")
    assert shown.stdout.strip() == "alice has an openai key stored, ending ghij"
    as_json = zm("user", "key", "show", "--json")
    assert as_json.exit_code == 0
    assert '"last4": "ghij"' in as_json.stdout and '"set": true' in as_json.stdout
    assert OWNER_KEY not in shown.stdout + as_json.stdout


def test_clear_forgets_the_key(zm: Zm) -> None:
    zm("user", "key", "set", stdin=OWNER_KEY)
    assert zm("user", "key", "clear").stdout.strip() == "cleared the openai key of alice"
    assert stored_ciphertext(zm.home) is None
    assert zm("user", "key", "clear").stdout.strip() == "alice had no openai key stored"
    assert '"cleared": false' in zm("user", "key", "clear", "--json").stdout


def test_a_key_is_kept_per_user_and_provider(zm: Zm) -> None:
    assert zm("user", "key", "set", stdin=OWNER_KEY).exit_code == 0
    assert zm("user", "add", "bob").exit_code == 0
    other = "sk-ant-bob-key-0123456789"
    assert zm("user", "key", "set", "--user", "bob", "--provider", "anthropic", stdin=other).exit_code == 0
    assert stored_ciphertext(zm.home, "bob", "openai") is None
    assert "ending 6789" in zm("user", "key", "show", "--user", "bob", "--provider", "anthropic").stdout
    assert "no openai key" in zm("user", "key", "show", "--user", "bob").stdout


def test_the_key_is_never_taken_from_the_command_line(zm: Zm) -> None:
    done = zm("user", "key", "set", OWNER_KEY)
    assert done.exit_code == 1
    assert done.stderr.startswith("validation_failed: the key is not taken as an argument")
    assert OWNER_KEY not in done.stdout + done.stderr  # the parser's own error would echo it
    assert stored_ciphertext(zm.home) is None
    usage = [line.strip() for line in zm("user", "key", "set", "--help").stdout.splitlines() if "Usage:" in line]
    assert len(usage) == 1 and usage[0].endswith("user key set [OPTIONS]")  # no argument to put a key in


@pytest.mark.parametrize(
    ("stdin", "error"),
    [
        ("", "validation_failed: the key is empty"),
        ("\n  \n", "validation_failed: the key is empty"),
        ("sk-one sk-two\n", "validation_failed: the key contains whitespace"),
        ("x" * 5000, "validation_failed: the key is longer than 4096 characters"),
    ],
)
def test_what_is_not_a_key_is_refused(zm: Zm, stdin: str, error: str) -> None:
    done = zm("user", "key", "set", stdin=stdin)
    assert done.exit_code == 1
    assert done.stderr.startswith(error)


def test_offer_mode_needs_the_provider_named(zm: Zm) -> None:
    done = zm("user", "key", "set", stdin=OWNER_KEY, ZM_JUDGE_PROVIDER="none")
    assert done.exit_code == 1
    assert "--provider" in done.stderr
    assert zm("user", "key", "set", "--provider", "openai", stdin=OWNER_KEY, ZM_JUDGE_PROVIDER="none").exit_code == 0
    assert zm("user", "key", "set", "--provider", "mistral", stdin=OWNER_KEY).stderr.startswith(
        "validation_failed: provider: 'mistral' is not one of openai, anthropic"
    )


def test_an_unknown_user_is_not_asked_for_a_key(zm: Zm) -> None:
    zm("user", "list")  # creates alice, the local user
    done = zm("user", "key", "set", "--user", "carol", stdin=OWNER_KEY)
    assert done.exit_code == 1
    assert done.stderr.startswith("not_found: no user carol")


def test_without_zm_secret_key_the_generated_one_is_used_across_runs(tmp_path: Path) -> None:
    zm = Zm(tmp_path / "zm-home")
    assert zm("user", "key", "set", stdin=OWNER_KEY).exit_code == 0
    assert "ending ghij" in zm("user", "key", "show").stdout
    generated = (zm.home / "secret_key").read_text().strip()
    ciphertext = stored_ciphertext(zm.home)
    assert ciphertext is not None and crypto.decrypt(generated, ciphertext) == OWNER_KEY


def test_a_changed_secret_key_is_a_clear_unavailable_that_leaks_nothing(zm: Zm) -> None:
    zm("user", "key", "set", stdin=OWNER_KEY)
    ciphertext = stored_ciphertext(zm.home)
    assert ciphertext is not None
    done = zm("user", "key", "show", ZM_SECRET_KEY=OTHER_SECRET)
    assert done.exit_code == 1
    assert done.stdout == ""
    assert done.stderr.startswith("unavailable: a stored provider key cannot be decrypted")
    assert "zm user key set" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    for secret in (OWNER_KEY, OWNER_KEY[-4:], SECRET, OTHER_SECRET, ciphertext):
        assert secret not in done.stderr
    # The fix the message names works: store it again under the new secret.
    assert zm("user", "key", "set", stdin=OWNER_KEY, ZM_SECRET_KEY=OTHER_SECRET).exit_code == 0
    assert "ending ghij" in zm("user", "key", "show", ZM_SECRET_KEY=OTHER_SECRET).stdout


# -- the key at work ---------------------------------------------------------------


def server_app(home: Path, server: FakeOpenAIServer, embedder: Any) -> App:
    """The server process on the data directory the CLI wrote to."""
    env = {
        "ZM_HOME": str(home),
        "ZM_JUDGE_PROVIDER": "openai",
        "ZM_JUDGE_BASE_URL": server.base_url,
        "ZM_JUDGE_API_KEY": SERVER_KEY,
        "ZM_HYGIENE_MODEL": STRONG,
        "ZM_JUDGE_TIMEOUT_S": "5",
        "ZM_SECRET_KEY": SECRET,
    }
    return build_app(Settings.from_environ(env), embedder=embedder)


def test_a_key_set_with_the_cli_pays_for_its_owner_s_calls_only(
    zm: Zm, openai_server: FakeOpenAIServer, embedder: Any
) -> None:
    assert zm("user", "key", "set", stdin=OWNER_KEY).exit_code == 0
    assert zm("user", "add", "bob").exit_code == 0
    openai_server.respond_with(lambda request: openai_server.verdict())
    app = server_app(zm.home, openai_server, embedder)
    try:
        # A sweep started by alice reviews bob's memory, then her own.
        assert isinstance(judge_for(app.judge_factory, "bob", run_id="run-alice").ask(PAIR), Judged)
        assert isinstance(judge_for(app.judge_factory, "alice", run_id="run-alice").ask(PAIR), Judged)
        with app.store.tx() as tx:
            rows = tx.ledger(run_id="run-alice")
    finally:
        app.close()
    assert [r.headers["authorization"] for r in openai_server.requests] == [
        f"Bearer {SERVER_KEY}",
        f"Bearer {OWNER_KEY}",
    ]
    assert [r["owner"] for r in rows] == ["bob", "alice"]


def test_the_key_is_in_no_file_while_the_database_is_open(
    make_app: Callable[..., App], openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    """The WAL holds the latest writes until a checkpoint: read it while the app still has it open."""
    openai_server.respond_with(lambda request: openai_server.verdict())
    app = make_app(
        {
            "ZM_HOME": str(tmp_path / "open-home"),
            "ZM_SECRET_KEY": SECRET,
            "ZM_JUDGE_PROVIDER": "openai",
            "ZM_JUDGE_BASE_URL": openai_server.base_url,
        }
    )
    set_owner_key(app.settings, app.store, "alice", None, OWNER_KEY, at=app.clock())
    judge_for(app.judge_factory, "alice").ask(PAIR)
    files = files_under(tmp_path / "open-home")
    assert "zm.db-wal" in files, "the test must see the write-ahead log"
    with app.store.tx() as tx:
        ciphertext = tx.get_provider_key("alice", "openai")
    assert ciphertext is not None
    assert any(ciphertext.encode() in content for content in files.values()), "the test must read the right files"
    for name, content in files.items():
        assert OWNER_KEY.encode() not in content, name


def test_the_key_is_in_no_log_line_even_at_debug_level(
    make_app: Callable[..., App], openai_server: FakeOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    openai_server.enqueue(openai_server.verdict(), openai_server.error(401, f"Incorrect API key provided: {OWNER_KEY}"))
    with caplog.at_level(logging.DEBUG):
        app = make_app(
            {"ZM_SECRET_KEY": SECRET, "ZM_JUDGE_PROVIDER": "openai", "ZM_JUDGE_BASE_URL": openai_server.base_url}
        )
        set_owner_key(app.settings, app.store, "alice", None, OWNER_KEY, at=app.clock())
        assert key_status(app.settings, app.store, "alice", None).last4 == "ghij"
        judge = judge_for(app.judge_factory, "alice")
        judge.ask(PAIR)
        judge.ask(PAIR)
        with app.store.tx() as tx:
            outcomes = [r["outcome"] for r in tx.ledger(owner="alice")]
    assert outcomes == ["judged", "http_error"]
    assert caplog.records, "the SDKs log at debug level; the test must see them"
    assert OWNER_KEY not in caplog.text
