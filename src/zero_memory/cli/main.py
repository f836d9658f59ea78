"""The ``zm`` entry point: nouns and verbs, one module per command group."""

from __future__ import annotations

import typer

from zero_memory import __version__
from zero_memory.cli import db, io, memories, projects, users

cli = typer.Typer(
    name="zm",
    help="zero-memory: a self-hosted memory server for AI coding agents that keeps its corpus clean.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

memories.register(cli)
io.register(cli)
cli.add_typer(users.group, name="user")
cli.add_typer(projects.group, name="project")
cli.add_typer(db.group, name="db")


def _optional_groups() -> None:
    """Command groups that live in their own modules and may grow independently."""
    import importlib

    for module_name, attr, name in (
        ("zero_memory.cli.serve", "register", None),
        ("zero_memory.cli.hygiene", "group", "hygiene"),
        ("zero_memory.cli.conflicts", "group", "conflicts"),
        ("zero_memory.cli.judge", "group", "judge"),
        ("zero_memory.cli.portability", "group", "portability"),
    ):
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name != module_name:
                raise
            continue
        if name is None:
            getattr(module, attr)(cli)
        else:
            cli.add_typer(getattr(module, attr), name=name)


_optional_groups()


@cli.command()
def version() -> None:
    """Print the version."""
    typer.echo(__version__)


def main() -> None:
    cli()
