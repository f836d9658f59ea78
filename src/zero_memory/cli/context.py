"""``zm context`` (the briefing, also as a Claude Code SessionStart hook), ``zm loops``, ``zm pin``/``unpin``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from zero_memory import errors
from zero_memory.capture import hook_log
from zero_memory.cli import verify
from zero_memory.cli.client_config import redact
from zero_memory.cli.common import JsonOption, app, console, handles_errors, local_caller, print_json, settings
from zero_memory.clock import utcnow
from zero_memory.memory import pins
from zero_memory.memory.briefing import build_context
from zero_memory.memory.briefing_text import age, render
from zero_memory.memory.loops import MAX_LIMIT, STATUSES, list_loops

HOOK_CLIENT = "claude-code-hook"
START_VERIFY_SECONDS = 3.0
"""How long the SessionStart hook checks anchors before it briefs; the rest wait for the next check."""
MAX_HOOK_INPUT = 1_000_000


def register(cli: typer.Typer) -> None:
    cli.command("context")(context)
    cli.command("loops")(loops)
    cli.command("pin")(pin)
    cli.command("unpin")(unpin)


def repository_root(start: Path) -> Path:
    """The nearest enclosing directory with a ``.git``, else ``start`` itself: the project a directory is in."""
    start = start.expanduser().absolute()
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return start


@handles_errors
def context(
    project: Annotated[
        str | None,
        typer.Option("--project", "-p", help="Project: a path, git remote or name. Default: this repository."),
    ] = None,
    topic: Annotated[str | None, typer.Option("--topic", "-t", help="What the session is about.")] = None,
    session: Annotated[str | None, typer.Option("--session", help="A session id to attach to the project.")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", help="At most this many topic memories (1–50).")] = 10,
    hook: Annotated[
        bool,
        typer.Option(
            "--hook",
            help="Run as a Claude Code SessionStart hook: read the hook's JSON on stdin (its cwd is the project), "
            "print the hook answer with the briefing as additionalContext.",
        ),
    ] = False,
    json_out: bool = JsonOption,
) -> None:
    """The briefing an agent gets at the start of a session: rules, open loops, memories, pending reviews."""
    if hook:
        sys.stdout.write(json.dumps(hook_answer(sys.stdin.read(MAX_HOOK_INPUT))) + "\n")
        return
    hint = project or str(repository_root(Path.cwd()))
    briefing = build_context(app(), local_caller(), topic=topic, project_hint=hint, session_id=session, limit=limit)
    if json_out:
        print_json(briefing)
        return
    sys.stdout.write(render(briefing) + "\n")


def hook_answer(raw: str) -> dict[str, Any]:
    """Claude Code's SessionStart answer for one hook input; a briefing that fails says why, never blocks."""
    event: Any = None
    try:
        event = json.loads(raw) if raw.strip() else {}
        if not isinstance(event, dict):
            raise errors.validation("the hook input is not a JSON object")
        cwd = event.get("cwd")
        root = repository_root(Path(cwd if isinstance(cwd, str) and cwd else Path.cwd()))
        # No session is attached: the client's session id is not the one its MCP calls carry (Claude Code's
        # carry none), so the briefing must not promise that an unscoped remember lands in this project. It
        # is the session's one briefing: it does not send the agent to build_context for a second.
        # The anchored memories checked against the tree first (bounded; quiet), so the briefing lists those
        # whose code changed since they were verified.
        verify.quietly(root, seconds=START_VERIFY_SECONDS, event="SessionStart")
        briefing = build_context(app(), local_caller(HOOK_CLIENT), project_hint=str(root))
        text = render(briefing) + f'\n\nThe repository root, for project_hint: "{root}".'
    except (errors.ZMError, ValueError, OSError) as error:
        reason = str(error).splitlines()[0]
        text = f"zero-memory: no briefing ({reason}); call `build_context` yourself."
        event_session = event.get("session_id") if isinstance(event, dict) else None
        session = event_session if isinstance(event_session, str) else None
        line = hook_log.line(utcnow(), "claude-code", "SessionStart", session, f"no briefing: {redact(reason)}")
        hook_log.append(settings().home, line)
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}


@handles_errors
def loops(
    project: Annotated[
        str | None, typer.Option("--project", "-p", help="Only this project (plus personal and core).")
    ] = None,
    closed: Annotated[bool, typer.Option("--closed", help="Closed loops instead, most recent first.")] = False,
    limit: Annotated[int, typer.Option("--limit", "-n", help=f"At most this many (1–{MAX_LIMIT}).")] = 100,
    json_out: bool = JsonOption,
) -> None:
    """Open tasks and questions, oldest first, with how long each has been open."""
    status = STATUSES[1] if closed else STATUSES[0]
    result = list_loops(app(), local_caller(), status=status, project_hint=project, limit=limit)
    if json_out:
        print_json(result)
        return
    if not result.loops:
        console.print(f"no {status} loops")
    for loop in result.loops:
        when = f"open {age(loop.open_days)}" if loop.open_days is not None else f"closed by {loop.closed_by}"
        console.print(f"{loop.id}  {loop.kind.value} · {loop.scope} · {when}", highlight=False, markup=False)
        console.print(f"  {loop.content}", highlight=False, markup=False)
    if result.more:
        console.print(f"(more: raise --limit above {limit})")


@handles_errors
def pin(memory_id: Annotated[str, typer.Argument(help="A memory id.")], json_out: bool = JsonOption) -> None:
    """Pin a memory as a standing rule: every briefing leads with it (undo with unpin)."""
    result = pins.pin(app(), local_caller(), memory_id)
    if json_out:
        print_json(result)
        return
    console.print(f"{result.id} pinned" + ("" if result.changed else " already"), highlight=False)


@handles_errors
def unpin(memory_id: Annotated[str, typer.Argument(help="A memory id.")], json_out: bool = JsonOption) -> None:
    """Take a memory out of the standing rules."""
    result = pins.unpin(app(), local_caller(), memory_id)
    if json_out:
        print_json(result)
        return
    console.print(f"{result.id} unpinned" + ("" if result.changed else " (was not pinned)"), highlight=False)
