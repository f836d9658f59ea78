"""``zm setup claude-code|codex|cursor``: connect a client to ``zm mcp`` in one step."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Annotated

import typer

from zero_memory import errors
from zero_memory.cli.client_config import CLIENTS, PASSED_ENV, Setup, apply_all, snippet
from zero_memory.cli.common import console, handles_errors


def register(cli: typer.Typer) -> None:
    cli.command("setup")(setup)


def zm_command() -> str:
    """The absolute path of this ``zm``: a client's PATH may not hold the virtual environment it lives in."""
    beside = Path(sys.executable).with_name("zm")
    if beside.exists():
        return str(beside)
    return shutil.which("zm") or "zm"


@handles_errors
def setup(
    client: Annotated[str, typer.Argument(help=f"The client: {', '.join(CLIENTS)}.")],
    print_only: Annotated[bool, typer.Option("--print", help="Print the configuration instead of writing it.")] = False,
    command: Annotated[
        str | None, typer.Option("--command", help="The zm to run. Default: this one, by its absolute path.")
    ] = None,
) -> None:
    """Add zero-memory to a client's configuration (and, for Claude Code, a SessionStart hook that hands each
    session its briefing). Running it again changes nothing; the file's other entries are kept."""
    entries_of = CLIENTS.get(client)
    if entries_of is None:
        raise errors.validation(f"client: expected one of {', '.join(CLIENTS)}, got {client[:40]!r}")
    env = {name: os.environ[name] for name in PASSED_ENV if os.environ.get(name)}
    entries = entries_of(Setup(zm=command or zm_command(), env=env))
    home = Path.home()
    if print_only:
        for file in dict.fromkeys(entry.file for entry in entries):
            path = home / file
            console.print(f"# {path}", highlight=False, markup=False)
            console.print(snippet(path, [e for e in entries if e.file == file]), highlight=False, markup=False)
        return
    for applied in apply_all(home, entries, dry=False):
        console.print(f"{applied.change}: {applied.entry.describe()} in {applied.path}", highlight=False, markup=False)
    console.print(f"Restart {client} to load it.", highlight=False, markup=False)
