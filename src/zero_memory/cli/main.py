"""The ``zm`` entry point: nouns and verbs, one module per command group.

Each command's module is imported when the command runs (``cli/lazy.py``): ``COMMANDS`` names the module
whose ``register(cli)`` adds it, in the order ``zm --help`` lists them.
"""

from __future__ import annotations

import typer

from zero_memory import __version__
from zero_memory.cli import common
from zero_memory.cli.lazy import lazy_group

COMMANDS = {
    **dict.fromkeys(
        ["remember", "recall", "get", "forget", "restore", "reaffirm", "close-loop", "move", "link"], "memories"
    ),
    **dict.fromkeys(["context", "loops", "pin", "unpin"], "context"),
    **dict.fromkeys(["import", "export"], "io"),
    "ingest": "capture",
    **dict.fromkeys(["serve", "mcp"], "serve"),
    "setup": "setup",
    "verify": "verify",
    "version": "main",
    "hook": "capture",
    "capture": "capture",
    "user": "users",
    "project": "projects",
    "db": "db",
    "hygiene": "hygiene",
    "conflicts": "conflicts",
    "portability": "portability",
    "judge": "judge",
}

cli = typer.Typer(
    name="zm",
    help="zero-memory: a self-hosted memory server for AI coding agents that keeps its corpus clean.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=lazy_group(COMMANDS),
)


# Runs before every command: scopes the App the command gets to this one invocation (cli.common.app).
# No docstring: the help above stays zm's.
@cli.callback()
def invocation(context: typer.Context) -> None:
    common.begin_invocation(context)


def register(commands: typer.Typer) -> None:
    commands.command()(version)


def version() -> None:
    """Print the version."""
    typer.echo(__version__)


def main() -> None:
    cli()
