"""The ``zm`` entry point: nouns and verbs, one module per command group."""

from __future__ import annotations

import typer

from zero_memory import __version__
from zero_memory.cli import (
    capture,
    common,
    conflicts,
    db,
    hygiene,
    io,
    judge,
    memories,
    oauth,
    portability,
    projects,
    serve,
    setup,
    users,
    verify,
)
from zero_memory.cli import context as briefing

cli = typer.Typer(
    name="zm",
    help="zero-memory: a self-hosted memory server for AI coding agents that keeps its corpus clean.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

memories.register(cli)
briefing.register(cli)
io.register(cli)
capture.register(cli)
cli.add_typer(users.group, name="user")
users.group.add_typer(oauth.group, name="oauth")
cli.add_typer(projects.group, name="project")
cli.add_typer(db.group, name="db")
cli.add_typer(hygiene.group, name="hygiene")
cli.add_typer(conflicts.group, name="conflicts")
cli.add_typer(portability.group, name="portability")
cli.add_typer(judge.group, name="judge")
serve.register(cli)
setup.register(cli)
verify.register(cli)


# Runs before every command: scopes the App the command gets to this one invocation (cli.common.app).
# No docstring: the help above stays zm's.
@cli.callback()
def invocation(context: typer.Context) -> None:
    common.begin_invocation(context)


@cli.command()
def version() -> None:
    """Print the version."""
    typer.echo(__version__)


def main() -> None:
    cli()
