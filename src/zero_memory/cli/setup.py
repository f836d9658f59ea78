"""``zm setup claude-code|codex|cursor``: connect a client to ``zm mcp`` in one step."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Annotated

import typer

from zero_memory import errors
from zero_memory.cli import git_hooks, warm_start
from zero_memory.cli.client_config import (
    CAPTURE_CLIENTS,
    CAPTURE_ENV,
    CLIENTS,
    PASSED_ENV,
    Applied,
    Setup,
    apply_all,
    snippet,
)
from zero_memory.cli.common import console, handles_errors, settings
from zero_memory.settings import Settings


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
    client: Annotated[
        str, typer.Argument(help=f"The client: {', '.join(CLIENTS)}; or git, for this repository's git hooks.")
    ],
    print_only: Annotated[bool, typer.Option("--print", help="Print the configuration instead of writing it.")] = False,
    command: Annotated[
        str | None, typer.Option("--command", help="The zm to run. Default: this one, by its absolute path.")
    ] = None,
    warm: Annotated[
        bool,
        typer.Option(
            "--warm/--no-warm",
            help="Start zm mcp once per protocol version now, so the client's first start answers at once.",
        ),
    ] = True,
    capture: Annotated[
        bool,
        typer.Option(
            "--capture",
            help="Also send each session's conversation to capture (docs/capture.md): Claude Code's PreCompact "
            "and SessionEnd hooks, Codex's notify program.",
        ),
    ] = False,
) -> None:
    """Add zero-memory to a client's configuration (and, for Claude Code, a SessionStart hook that hands each
    session its briefing). Running it again changes nothing; the file's other entries, and the keys you added
    inside ours, are kept; it lists each key it added, changed or removed."""
    if client == "git":
        # Not a client: this repository's git hooks, which verify its anchored memories as the code moves.
        for installed in git_hooks.install(Path.cwd(), command or zm_command()):
            console.print(f"{installed.change}: {installed.path}", highlight=False, markup=False)
        return
    entries_of = CLIENTS.get(client)
    if entries_of is None:
        raise errors.validation(f"client: expected one of {', '.join(CLIENTS)}, git, got {client[:40]!r}")
    env = {name: os.environ[name] for name in PASSED_ENV if os.environ.get(name)}
    model_env = _capture_env(client) if capture else {}
    entries = entries_of(Setup(zm=command or zm_command(), env=env, capture=capture, model_env=model_env))
    home = Path.home()
    if print_only:
        for file in dict.fromkeys(entry.file for entry in entries):
            path = home / file
            console.print(f"# {path}", highlight=False, markup=False)
            console.print(snippet(path, [e for e in entries if e.file == file]), highlight=False, markup=False)
        return
    for applied in apply_all(home, entries, dry=False):
        for line in report(applied):
            console.print(line, highlight=False, markup=False)
    if warm:
        _warm(command or zm_command(), env)
    console.print(f"Restart {client} to load it.", highlight=False, markup=False)
    if capture:
        console.print(
            "Capture pays with the provider key stored by `zm user key set` (no key is written to a client's "
            "configuration), or one in the client's own environment.",
            highlight=False,
            markup=False,
        )


def report(applied: Applied) -> list[str]:
    """The entry's line, then one per key added, changed or removed, then the user's keys that were kept.
    Key names only: a value may be a database URL with its password."""
    outcome = applied.outcome
    lines = [f"{outcome.change}: {applied.entry.describe()} in {applied.path}"]
    lines += [f"  {edit.line()}" for edit in outcome.edits]
    if outcome.kept:
        lines.append(f"  kept (yours): {', '.join(outcome.kept)}")
    return lines


def _capture_env(client: str) -> dict[str, str]:
    """The extraction model's settings for the capture hook, from where ``zm setup`` runs; refused without one
    (every hook run would fail)."""
    if client not in CAPTURE_CLIENTS:
        raise errors.validation(
            f"--capture: {client} has no transcript hook; capture works with {' and '.join(CAPTURE_CLIENTS)}"
        )
    if Settings.from_environ(os.environ).judge_provider == "none":
        raise errors.validation(
            "--capture needs an extraction model: set ZM_JUDGE_PROVIDER (and ZM_EXTRACT_MODEL or "
            "ZM_HYGIENE_FAST_MODEL) where you run zm setup; see docs/capture.md"
        )
    return {name: os.environ[name] for name in CAPTURE_ENV if os.environ.get(name)}


def _warm(zm: str, env: dict[str, str]) -> None:
    """The client's first ``zm mcp`` answers at once, as later ones do (cli/warm_start.py)."""
    versions, failure = warm_start.warm(zm, settings().home, env)
    if failure:
        console.print(
            f"note: zm mcp could not be started ahead ({failure}); its first start will be slower",
            highlight=False,
            markup=False,
        )
    else:
        console.print(
            f"ready: zm mcp answers at once (protocol versions {', '.join(versions)})", highlight=False, markup=False
        )
