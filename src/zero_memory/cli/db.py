"""``zm db``: schema migrations, re-embedding, copies, backups and restores."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from zero_memory import errors
from zero_memory.cli.common import JsonOption, app, console, fail, handles_errors, print_json, progress, settings
from zero_memory.embedding import build_embedder
from zero_memory.hygiene import retention
from zero_memory.memory.reindex import reindex as reindex_service
from zero_memory.memory.reindex import stale_count
from zero_memory.store import Store, open_store, pending_migrations
from zero_memory.store.copy import MIN_COSINE, CopyReport, copy_store, row_counts
from zero_memory.store.sqlite.backup import BackupReport
from zero_memory.store.sqlite.backup import backup as backup_store
from zero_memory.store.sqlite.backup import restore as restore_store

group = typer.Typer(
    help="Schema migrations, re-embedding, copying between stores, backups and restores, retention.",
    no_args_is_help=True,
)


def register(cli: typer.Typer) -> None:
    cli.add_typer(group, name="db")


@group.command("migrate")
@handles_errors
def migrate(
    check: Annotated[
        bool, typer.Option("--check", help="Only list the migrations that would be applied; change nothing.")
    ] = False,
    json_out: bool = JsonOption,
) -> None:
    """Apply pending schema migrations (opening the store also does this).

    A database migrated by a newer release is refused: there is no downgrade.
    """
    url = settings().database_url
    backend = "sqlite" if url.startswith("sqlite:") else "postgres"
    pending = pending_migrations(url)
    if not check:
        app().store.migrate()
    verb = "would apply" if check else "applied"
    if json_out:
        print_json({"pending" if check else "applied": pending, "backend": backend})
    else:
        console.print(
            f"{backend}: " + (f"{verb} {', '.join(pending)}" if pending else "up to date"),
            highlight=False,
            soft_wrap=True,
        )


@group.command("rollup")
@handles_errors
def rollup(json_out: bool = JsonOption) -> None:
    """Roll up old surfacings and usage events into per-day counts, then remove them.

    Usage events older than ZM_USAGE_RETENTION_DAYS, surfacings older than the re-examination
    window. Each scheduled cycle does the same; audit rows are kept.
    """
    done = retention.roll_up(app(), actor="operator")
    if json_out:
        print_json(done.to_dict())
        return
    console.print(
        f"rolled up {done.surfacings} surfacings older than {done.cutoffs.surfacings:%Y-%m-%d} and "
        f"{done.usage_events} usage events older than {done.cutoffs.usage_events:%Y-%m-%d} into per-day counts",
        highlight=False,
        soft_wrap=True,
    )


@group.command("backup")
@handles_errors
def backup(
    path: Annotated[
        Path, typer.Argument(metavar="PATH", show_default=False, help="A new file to write the backup to.")
    ],
    json_out: bool = JsonOption,
) -> None:
    """Copy the SQLite store to PATH while servers keep using it (SQLite's online backup).

    For PostgreSQL, use pg_dump (docs/deployment.md).
    """
    report = backup_store(settings().database_url, path)
    _print_backup(report, "backed up to", json_out)


@group.command("restore")
@handles_errors
def restore(
    path: Annotated[Path, typer.Argument(metavar="PATH", show_default=False, help="A backup written by zm db backup.")],
    force: Annotated[bool, typer.Option("--force", help="Replace a store that holds users or memories.")] = False,
    json_out: bool = JsonOption,
) -> None:
    """Replace the SQLite store with a backup, then migrate it. Stop the servers first.

    Refuses a store that is not empty unless --force. For PostgreSQL, use pg_restore (docs/deployment.md).
    """
    url = settings().database_url
    report = restore_store(url, path, force=force)
    open_store(url, dim=build_embedder(settings().embedding_model).dim).close()
    _print_backup(report, "restored from", json_out)


def _print_backup(report: BackupReport, verb: str, json_out: bool) -> None:
    if json_out:
        print_json({"path": report.path, "bytes": report.bytes, "schema": report.schema, "rows": report.rows})
        return
    counts = ", ".join(f"{n} {table}" for table, n in report.rows.items())
    schema = report.schema[-1] if report.schema else "none"
    console.print(f"{verb} {report.path} ({counts}; schema {schema})", highlight=False, soft_wrap=True)


@group.command("reindex")
@handles_errors
def reindex(
    everything: Annotated[bool, typer.Option("--all", help="Re-embed every memory, not only stale ones.")] = False,
    json_out: bool = JsonOption,
) -> None:
    """Re-embed memories whose vectors came from another embedding model."""
    application = app()
    total = stale_count(application, everything=everything)
    with progress(total, "re-embedding") as advance:
        done = reindex_service(application, everything=everything, advance=advance)
    if json_out:
        print_json({"reindexed": done, "model": application.embedder.model_id})
    else:
        console.print(f"re-embedded {done} memories with {application.embedder.model_id}", highlight=False)


@group.command("copy")
@handles_errors
def copy(
    src_url: Annotated[
        str,
        typer.Argument(
            metavar="SRC_URL",
            show_default=False,
            help="The database to copy: sqlite:///PATH or postgresql://USER@HOST/DB.",
        ),
    ],
    dst_url: Annotated[
        str,
        typer.Argument(
            metavar="DST_URL",
            show_default=False,
            help="An empty database to copy into; migrated first, a SQLite file is created.",
        ),
    ],
    json_out: bool = JsonOption,
) -> None:
    """Copy a whole installation to another database (SQLite to PostgreSQL or back), then verify it.

    Stop the servers using SRC_URL first: writes made during the copy are not copied.
    """
    _check_urls(src_url, dst_url)
    # The configured model's dimension, for the destination's vector index; the model itself is not loaded.
    dim = build_embedder(settings().embedding_model).dim
    source = open_store(src_url, dim=dim)
    try:
        destination = open_store(dst_url, dim=dim)
        try:
            report = _copy_with_progress(source, destination)
        finally:
            destination.close()
    finally:
        source.close()
    if json_out:
        print_json(report.to_dict())
    else:
        _print_report(report)
    if not report.ok:
        fail(
            f"internal: the copy does not match its source ({_mismatch(report)}); discard the destination "
            "database and copy again"
        )


def _check_urls(source_url: str, destination_url: str) -> None:
    for name, url in (("SRC_URL", source_url), ("DST_URL", destination_url)):
        if not url.startswith(("sqlite:", "postgresql:", "postgres:")):
            raise errors.validation(f"{name}: expected sqlite:///PATH or postgresql://…")
    if source_url == destination_url:
        raise errors.validation("DST_URL: the same database as SRC_URL; name a new, empty one")
    if source_url.startswith("sqlite:"):
        path = Path(source_url.removeprefix("sqlite:///").removeprefix("sqlite://"))
        if not path.is_file():
            raise errors.validation(f"SRC_URL: no SQLite database at {path}")


def _copy_with_progress(source: Store, destination: Store) -> CopyReport:
    total = sum(row_counts(source).values())
    with progress(total, "copying rows") as advance:
        return copy_store(source, destination, advance=advance)


def _print_report(report: CopyReport) -> None:
    width = max(len(t) for t in report.source)
    console.print(f"  {'table':<{width}}  {'source':>9}  {'copied':>9}", highlight=False)
    for table, rows in report.source.items():
        copied = report.destination.get(table, 0)
        mark = "" if copied == rows else "  MISMATCH"
        console.print(f"  {table:<{width}}  {rows:>9}  {copied:>9}{mark}", highlight=False)
    if report.min_cosine is None:
        vectors = "no vectors to check"
    else:
        vectors = f"{report.vectors_checked} vectors sampled, lowest cosine {report.min_cosine:.6f}"
    console.print(
        f"copied {report.rows} rows from {report.source_backend} to {report.destination_backend}; {vectors}",
        highlight=False,
        soft_wrap=True,
    )


def _mismatch(report: CopyReport) -> str:
    parts = [f"{t}: {report.source[t]} rows, {report.destination.get(t, 0)} copied" for t in report.mismatched]
    if report.min_cosine is not None and report.min_cosine < MIN_COSINE:
        parts.append(f"a sampled vector differs (cosine {report.min_cosine:.4f})")
    return "; ".join(parts)
