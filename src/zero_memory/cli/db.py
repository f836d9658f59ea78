"""``zm db``: schema migrations and re-embedding."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from zero_memory import errors
from zero_memory.cli.common import JsonOption, app, console, fail, handles_errors, print_json, progress, settings
from zero_memory.embedding import build_embedder
from zero_memory.memory.reindex import reindex as reindex_service
from zero_memory.memory.reindex import stale_count
from zero_memory.store import Store, open_store
from zero_memory.store.copy import MIN_COSINE, CopyReport, copy_store, row_counts

group = typer.Typer(help="Schema migrations, re-embedding, copying between stores.", no_args_is_help=True)


@group.command("migrate")
@handles_errors
def migrate(json_out: bool = JsonOption) -> None:
    """Apply pending schema migrations (opening the store also does this)."""
    applied = app().store.migrate()
    if json_out:
        print_json({"applied": applied, "backend": app().store.backend})
    else:
        console.print(
            f"{app().store.backend}: " + (f"applied {', '.join(applied)}" if applied else "up to date"), highlight=False
        )


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
