"""``zm import`` and ``zm export``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from zero_memory import errors
from zero_memory.cli.common import JsonOption, app, console, handles_errors, local_caller, print_json, progress
from zero_memory.memory import exports
from zero_memory.memory.imports import count_records, import_path


def register(cli: typer.Typer) -> None:
    cli.command("import")(import_command)
    cli.command("export")(export_command)


@handles_errors
def import_command(
    path: Annotated[Path, typer.Argument(help="A JSONL file or a folder of Markdown files.")],
    scope: Annotated[str | None, typer.Option("--scope", help="Target scope path, core or personal.")] = None,
    project: Annotated[str | None, typer.Option("--project", "-p", help="Target project hint.")] = None,
    json_out: bool = JsonOption,
) -> None:
    """Import curated memories (rank 1); running it twice imports nothing new."""
    caller = local_caller()
    total = count_records(path) if path.exists() else 0
    with progress(total, "importing") as advance:
        report = import_path(app(), caller, path, scope=scope, project_hint=project, advance=advance)
    if json_out:
        print_json(report.to_dict())
        return
    console.print(
        f"imported {report.imported}, skipped {report.skipped} already stored, failed {report.failed_total}",
        highlight=False,
    )
    for failure in report.failed:
        console.print(f"  {failure['record']}: {failure['error']}", highlight=False, markup=False)
    if report.failed_total > len(report.failed):
        console.print(f"  … and {report.failed_total - len(report.failed)} more", highlight=False)
    if report.failed_total:
        raise typer.Exit(1)


@handles_errors
def export_command(
    output_format: Annotated[str, typer.Option("--format", help="jsonl or markdown.")] = "jsonl",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to a file instead of stdout.")] = None,
) -> None:
    """Export every memory you can see, in every state."""
    if output_format not in ("jsonl", "markdown"):
        raise errors.validation("format: expected jsonl or markdown")
    caller = local_caller()
    lines = exports.jsonl_lines(app(), caller) if output_format == "jsonl" else exports.markdown(app(), caller)
    handle = output.open("w", encoding="utf-8") if output else sys.stdout
    try:
        for line in lines:
            handle.write(line + "\n")
    finally:
        if output:
            handle.close()
