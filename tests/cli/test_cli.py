"""The CLI as a subprocess: memory commands, users, projects, import/export, db, errors."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.cli.conftest import ZmResult

FAKE_GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" + "k1L2m3N4o5P6q7R8s9T0"

Zm = Callable[..., ZmResult]


def test_remember_then_recall_round_trips_through_the_shell(zm: Zm) -> None:
    created = zm(
        "remember", "Use ruff for linting, not flake8", "--kind", "convention", "--project", "/r/api", "--json"
    )
    assert created.code == 0, created.err
    memory = created.json()
    assert memory["status"] == "created" and memory["scope"].startswith("proj.")
    found = zm("recall", "which linter do we use", "--project", "/r/api", "--json")
    assert found.code == 0
    assert [h["id"] for h in found.json()["hits"]] == [memory["id"]]
    shown = zm("get", memory["id"], "--json").json()
    assert shown["memory"]["content"] == "Use ruff for linting, not flake8"
    assert shown["audit"][0]["action"] == "remember"


def test_errors_are_one_line_with_a_stable_prefix_and_a_non_zero_exit(zm: Zm) -> None:
    no_target = zm("remember", "Homeless fact", "--kind", "fact")
    assert no_target.code == 1
    assert no_target.err.startswith("validation_failed: scope_target_required:")
    assert no_target.err.count("\n") == 1
    secret = zm("remember", f"token {FAKE_GITHUB_TOKEN}", "--kind", "fact", "--scope", "personal")
    assert secret.code == 1
    assert secret.err.startswith("validation_failed: secret_content_rejected: content github_token")
    assert FAKE_GITHUB_TOKEN not in secret.err + secret.out
    missing = zm("forget", "mem_nothing")
    assert missing.code == 1 and missing.err.startswith("not_found:")
    bad_kind = zm("remember", "x", "--kind", "rumour", "--scope", "personal")
    assert bad_kind.code == 2


def test_forget_restore_and_close_loop(zm: Zm) -> None:
    task = zm("remember", "Renew the TLS certificate", "--kind", "task", "--scope", "personal", "--json").json()
    assert zm("close-loop", task["id"], "--note", "renewed", "--json").json()["invalidated_reason"] == "closed"
    assert zm("restore", task["id"], "--json").json()["status"] == "live"
    assert zm("forget", task["id"], "--json").json()["invalidated_reason"] == "forgotten"


def test_users_tokens_and_projects(zm: Zm) -> None:
    added = zm("user", "add", "bob", "--json")
    assert added.code == 0
    assert added.json()["token"].startswith("zm_")
    again = zm("user", "add", "bob")
    assert again.code == 1 and again.err.startswith("conflict:")
    token = zm("user", "token", "bob", "--json").json()["token"]
    assert token != added.json()["token"]
    assert {u["id"] for u in zm("user", "list", "--json").json()} >= {"bob"}
    assert zm("project", "create", "billing", "--path", "/srv/billing", "--json").json()["scope"].endswith(".billing")
    listed = zm("project", "list", "--json").json()
    assert [p["role"] for p in listed] == ["admin"]
    scope = listed[0]["scope"]
    assert zm("project", "grant", scope, "bob", "reader").code == 0
    refused = zm("project", "grant", scope, "bob", "owner")
    assert refused.code == 1 and refused.err.startswith("validation_failed: role")


def test_import_is_idempotent_and_records_its_source_directory(zm: Zm, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "linting.md").write_text("---\nkind: convention\n---\nAll Python code is formatted with ruff format.\n")
    (notes / "ports.md").write_text("The admin UI listens on port 9000.\n")
    (notes / "leak.md").write_text(f"Deploy with {FAKE_GITHUB_TOKEN}\n")
    first = zm("import", str(notes), "--scope", "personal", "--json")
    assert first.code == 0, first.err
    assert first.json() == {
        "imported": 2,
        "skipped": 0,
        "failed": [{"record": "leak.md", "error": first.json()["failed"][0]["error"]}],
    }
    assert first.json()["failed"][0]["error"].startswith("validation_failed: secret_content_rejected:")
    second = zm("import", str(notes), "--scope", "personal", "--json")
    assert second.json()["imported"] == 0 and second.json()["skipped"] == 2
    exported = [json.loads(line) for line in zm("export").out.splitlines()]
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
    markdown = zm("export", "--format", "markdown").out
    assert "Never deploy on Fridays" in markdown and "## convention" in markdown


def test_db_migrate_and_reindex(zm: Zm) -> None:
    zm("remember", "The CDN is Cloudflare", "--kind", "fact", "--scope", "personal")
    assert zm("db", "migrate", "--json").json()["backend"] == "sqlite"
    # Written with the default model, re-embedded with another: every vector is made again.
    moved = zm("db", "reindex", "--json", env={"ZM_EMBEDDING_MODEL": "hash:512"}).json()
    assert moved == {"reindexed": 1, "model": "hash-512"}
    assert zm("db", "reindex", "--json", env={"ZM_EMBEDDING_MODEL": "hash:512"}).json()["reindexed"] == 0


def test_every_command_has_help(zm: Zm) -> None:
    top = zm("--help")
    assert top.code == 0
    for command in (
        "remember",
        "recall",
        "get",
        "forget",
        "restore",
        "close-loop",
        "move",
        "link",
        "import",
        "export",
        "user",
        "project",
        "db",
    ):
        result = zm(command, "--help")
        assert result.code == 0, command
        assert "Usage" in result.out
