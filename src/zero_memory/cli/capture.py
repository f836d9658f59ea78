"""The capture stream from a shell: ``zm ingest``, ``zm hook claude-code|codex``, ``zm capture list|drain``."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from zero_memory import errors
from zero_memory.capture import hook_log, hooks
from zero_memory.capture.extract import drain
from zero_memory.capture.ingest import ingest_text
from zero_memory.capture.models import ChunkView, HookReport, IngestResult
from zero_memory.capture.views import chunk_views, chunks_by_id
from zero_memory.cli.client_config import redact
from zero_memory.cli.common import (
    JsonOption,
    app,
    console,
    err_console,
    handles_errors,
    local_caller,
    print_json,
    settings,
)
from zero_memory.clock import utcnow
from zero_memory.domain.records import ChunkStatus

MAX_HOOK_INPUT = 1_000_000
# Extraction runs on the app's background thread; a command waits for it this long before it reports.
WAIT_S = 600

hook_group = typer.Typer(
    help="Client hooks that send a session's new words to capture (install them with your client's settings).",
    no_args_is_help=True,
)
capture_group = typer.Typer(help="Staged conversation chunks and their extraction.", no_args_is_help=True)


def register(cli: typer.Typer) -> None:
    cli.command("ingest")(ingest_command)
    cli.add_typer(hook_group, name="hook")
    cli.add_typer(capture_group, name="capture")


@handles_errors
def ingest_command(
    path: Annotated[str, typer.Argument(help="A text file of the conversation, or - for stdin.")],
    conversation: Annotated[
        str | None,
        typer.Option("--conversation", "-c", help="The conversation's id (default: the file's path; stdin needs it)."),
    ] = None,
    project: Annotated[
        str | None, typer.Option("--project", "-p", help="Project hint: path, git remote or name.")
    ] = None,
    client: Annotated[str, typer.Option("--client", help="The client the conversation ran in.")] = "cli",
    json_out: bool = JsonOption,
) -> None:
    """Extract provisional memories from a conversation: staged at once, extracted by the model, then reported."""
    if path == "-":
        if conversation is None:
            raise errors.validation("--conversation: required when the conversation comes on stdin")
        text = sys.stdin.read()
    else:
        file = Path(path).expanduser()
        if not file.is_file():
            raise errors.not_found(f"file {path}")
        text = file.read_text(encoding="utf-8", errors="replace")
        conversation = conversation or str(file.resolve())
    application = app()
    results = ingest_text(
        application, local_caller(client), text, conversation_id=conversation, client=client, project_hint=project
    )
    if not json_out:
        for result in results:
            console.print(
                f"{result.status} {result.chunk_id} ({result.chars:,} characters) for {result.scope}", highlight=False
            )
    application.wait_idle(timeout=WAIT_S)
    views = _final(results)
    if json_out:
        print_json({"chunks": [r.model_dump(mode="json") for r in results], "extraction": views})
        return
    for view in views:
        console.print(_describe(view), highlight=False, markup=False)


@hook_group.command("claude-code")
@handles_errors
def hook_claude_code(json_out: bool = JsonOption) -> None:
    """Claude Code hook (SessionEnd, PreCompact, Stop): reads the hook JSON on stdin, sends the new lines.
    Nothing to send, or no way to send it now, is a quiet exit 0 with a line in `zm capture log`."""
    payload = _payload(sys.stdin.read(MAX_HOOK_INPUT + 1))
    skipped = hooks.nothing_to_read(payload)  # bad input is refused here, before the quiet part
    with _quietly(hooks.CLAUDE_CODE, payload, "session_id", "hook_event_name", json_out) as run:
        if skipped is not None:
            run.outcome = f"nothing sent: {skipped}"
            return
        application = app()
        states = hooks.state_dir(application)
        run.report = hooks.claude_code(application, local_caller(hooks.CLAUDE_CODE), payload, states)


@hook_group.command("codex")
@handles_errors
def hook_codex(
    notification: Annotated[
        str | None, typer.Argument(help="The JSON Codex passes to its notify program (default: read stdin).")
    ] = None,
    json_out: bool = JsonOption,
) -> None:
    """Codex notify program (notify = ["zm", "hook", "codex"]): sends each finished turn. No way to send it
    now is a quiet exit 0 with a line in `zm capture log`."""
    payload = _payload(notification if notification is not None else sys.stdin.read(MAX_HOOK_INPUT + 1))
    if payload.get("type") != "agent-turn-complete":
        return  # other notifications carry no words
    hooks.keep_codex_turn(payload, hooks.states_in(settings().home))
    with _quietly(hooks.CODEX, payload, "thread-id", "type", json_out) as run:
        application = app()
        run.report = hooks.codex(application, local_caller(hooks.CODEX), payload, hooks.state_dir(application))


@capture_group.command("log")
@handles_errors
def log_command(
    lines: Annotated[int, typer.Option("--lines", "-n", help="The newest this many lines.", min=1)] = 20,
) -> None:
    """What the capture hooks did on their last runs, oldest first: sent, nothing to send, or why not now."""
    home = settings().home
    found = hook_log.tail(home, lines)
    if not found:
        console.print(f"no hook has run yet (the log is {hook_log.path(home)})", highlight=False, markup=False)
    for line in found:
        console.print(line, highlight=False, markup=False, soft_wrap=True)


@dataclass
class _Run:
    report: HookReport | None = None
    outcome: str = ""


@contextmanager
def _quietly(client: str, payload: dict[str, Any], session_key: str, event_key: str, json_out: bool) -> Iterator[_Run]:
    """Run a hook's body so that it never fails the client for what is not a defect: a refusal or an error
    that reaches here (the database or the model down, today's budget spent, a full queue) becomes a line
    in the hook log and exit 0; what the run sent is logged too. Bad hook input was refused before."""
    run = _Run()
    try:
        yield run
    except (errors.ZMError, OSError) as error:
        run.outcome = f"not sent, tried again on the next run: {redact(str(error).splitlines()[0])}"
    if run.report is not None:
        run.outcome = _sent(run.report)
    session, event = payload.get(session_key), payload.get(event_key)
    hook_log.append(
        settings().home,
        hook_log.line(
            utcnow(),
            client,
            event if isinstance(event, str) else "hook",
            session if isinstance(session, str) else None,
            run.outcome,
        ),
    )
    if json_out:
        print_json(run.report if run.report is not None else {"outcome": run.outcome})
    elif run.report is not None:
        # stderr: a client may read a hook's stdout as instructions.
        err_console.print(f"zm: {run.outcome}", highlight=False, markup=False)


def _sent(report: HookReport) -> str:
    withheld = f", {report.withheld_turns} left out (credential)" if report.withheld_turns else ""
    return f"sent {report.turns} turn(s), {report.chars:,} characters, in {len(report.chunks)} chunk(s){withheld}"


@capture_group.command("list")
@handles_errors
def list_chunks(
    status: Annotated[ChunkStatus | None, typer.Option("--status", help="Only chunks in this state.")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", help="At most this many, newest first.", min=1)] = 50,
    json_out: bool = JsonOption,
) -> None:
    """Your staged chunks, newest first: their state, attempts, last error and what they produced."""
    views = chunk_views(app(), local_caller(), status=status, limit=limit)
    if json_out:
        print_json(views)
        return
    if not views:
        console.print("no chunks", highlight=False)
    for view in views:
        console.print(_describe(view), highlight=False, markup=False)


@capture_group.command("drain")
@handles_errors
def drain_command(json_out: bool = JsonOption) -> None:
    """Extract your chunks that are due now (a retry whose time has come, or one left by a stopped process)."""
    application = app()
    done = drain(application, owner=local_caller().uid)
    if json_out:
        print_json([{"chunk": d.chunk_id, "status": d.status.value, "error": d.error} for d in done])
        return
    console.print(f"{len(done)} chunk(s) attempted", highlight=False)


def _payload(raw: str) -> dict[str, Any]:
    if len(raw) > MAX_HOOK_INPUT:
        raise errors.validation(f"the hook input is over {MAX_HOOK_INPUT:,} characters")
    try:
        payload = json.loads(raw)
    except ValueError:
        raise errors.validation("the hook input is not JSON") from None
    if not isinstance(payload, dict):
        raise errors.validation("the hook input is not a JSON object")
    return payload


def _final(results: list[IngestResult]) -> list[ChunkView]:
    return chunks_by_id(app(), local_caller(), dict.fromkeys(r.chunk_id for r in results))


def _describe(view: ChunkView) -> str:
    text = f"{view.id} {view.status.value}: {view.statements} statement(s)"
    if view.statements:
        text += f", {view.created} created, {view.yielded} yielded, {view.absorbed} absorbed, {view.refused} refused"
    if view.last_error:
        text += f" (attempt {view.attempts}: {view.last_error})"
    return text
