"""``zm db``: schema migrations and re-embedding."""

from __future__ import annotations

from typing import Annotated

import typer

from zero_memory.cli.common import JsonOption, app, console, handles_errors, print_json, progress
from zero_memory.memory.reindex import reindex as reindex_service
from zero_memory.memory.reindex import stale_count

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
