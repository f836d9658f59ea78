"""``zm hygiene``: full cycles, the retro pass, undo, and the list of runs."""

from __future__ import annotations

from typing import Annotated

import typer

from zero_memory.access import users as accounts
from zero_memory.cli.common import JsonOption, app, console, handles_errors, local_caller, print_json, progress
from zero_memory.hygiene import runs
from zero_memory.hygiene.cycle import start_cycle
from zero_memory.hygiene.retro import count_remaining, retro
from zero_memory.hygiene.undo import undo_run

group = typer.Typer(help="Hygiene: full cycles, the retro pass, undo.", no_args_is_help=True)


def register(cli: typer.Typer) -> None:
    cli.add_typer(group, name="hygiene")


def _owners(owner: str | None, everyone: bool) -> list[str]:
    application = app()
    if everyone:
        return accounts.account_ids(application.store)
    if owner is not None:
        accounts.require_account(application.store, owner)
        return [owner]
    return [local_caller().uid]


@group.command("scan")
@handles_errors
def scan(
    owner: Annotated[str | None, typer.Option("--owner", help="Whose memories (default: you).")] = None,
    everyone: Annotated[bool, typer.Option("--all", help="Every user's memories, one cycle each.")] = False,
    rejudge: Annotated[bool, typer.Option("--rejudge", help="Also re-judge pending pairs.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Report what it would do; change nothing.")] = False,
    json_out: bool = JsonOption,
) -> None:
    """Run one full hygiene cycle and print its summary."""
    application = app()
    started_by = local_caller().uid
    results = []
    for uid in _owners(owner, everyone):
        run, summary = start_cycle(application, uid, started_by=started_by, dry_run=dry_run, rejudge=rejudge, wait=True)
        finished = runs.get_run(application, run.id)
        results.append(
            {
                "run_id": run.id,
                "owner": uid,
                "status": finished.status.value if finished else "completed",
                "dry_run": dry_run,
                **(summary or {}),
            }
        )
    if json_out:
        print_json(results[0] if len(results) == 1 else results)
        return
    for result in results:
        counts = ", ".join(
            f"{k} {v}" for k, v in result.items() if isinstance(v, int) and not isinstance(v, bool) and v
        )
        console.print(
            f"{result['run_id']} {result['owner']} {result['status']}"
            f"{' (dry run)' if dry_run else ''}: {counts or 'nothing to do'}",
            highlight=False,
        )
        for note in result.get("notes", []):
            console.print(f"  {note}", highlight=False, markup=False)


@group.command("retro")
@handles_errors
def retro_command(
    max_rows: Annotated[int, typer.Option("--max", help="New queue rows this batch may add.")],
    after: Annotated[str | None, typer.Option("--after", help="Resume after this cursor (printed by a batch).")] = None,
    offer: Annotated[bool, typer.Option("--offer", help="Run no model: park pairs unjudged.")] = False,
    owner: Annotated[str | None, typer.Option("--owner", help="Whose memories (default: you).")] = None,
    json_out: bool = JsonOption,
) -> None:
    """Walk the backlog oldest first and queue what it finds; never resolves anything by itself."""
    application = app()
    uid = _owners(owner, False)[0]
    with progress(count_remaining(application, uid, after), "retro") as advance:
        report = retro(
            application,
            uid,
            max_new_rows=max_rows,
            after=after,
            offer=offer,
            started_by=local_caller().uid,
            advance=advance,
        )
    if json_out:
        print_json(report.to_dict())
        return
    summary = report.summary
    console.print(
        f"{report.run_id}: walked {summary['subjects']} memories, queued {summary['queued']} pairs, "
        f"judged {summary['judged']}, failed {summary['failed_judgements']}",
        highlight=False,
    )
    if report.done:
        console.print("reached the end of the backlog", highlight=False)
    else:
        console.print(f"cursor: {report.cursor}", highlight=False)
        console.print(f"resume with: zm hygiene retro --max {max_rows} --after {report.cursor}", highlight=False)


@group.command("undo")
@handles_errors
def undo(
    run_id: Annotated[str, typer.Argument(help="The run to undo.")],
    json_out: bool = JsonOption,
) -> None:
    """Restore every memory a run invalidated and remove the links it added."""
    report = undo_run(app(), run_id, actor=local_caller().uid)
    if json_out:
        print_json(report)
        return
    console.print(
        f"restored {len(report.restored)} memories, removed {report.unlinked} links"
        + (f"; {len(report.already_live)} were already live" if report.already_live else ""),
        highlight=False,
    )
    for memory_id in report.restored:
        console.print(f"  restored {memory_id}", highlight=False)


@group.command("runs")
@handles_errors
def list_runs(
    limit: Annotated[int, typer.Option("--limit", "-n", help="How many.")] = 20,
    json_out: bool = JsonOption,
) -> None:
    """List recent hygiene runs with their summaries."""
    found = runs.all_runs(app(), limit=limit)
    rows = [
        {
            "run_id": r.id,
            "owner": r.owner,
            "kind": r.kind,
            "status": r.status.value,
            "dry_run": r.dry_run,
            "started_at": r.started_at.isoformat(),
            "summary": r.summary,
        }
        for r in found
    ]
    if json_out:
        print_json(rows)
        return
    for row in rows:
        console.print(
            f"{row['run_id']} {row['kind']} {row['owner'] or 'all'} {row['status']} {row['started_at']}",
            highlight=False,
        )
