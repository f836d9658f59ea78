"""``zm conflicts``: the review queue from a shell."""

from __future__ import annotations

from typing import Annotated

import typer

from zero_memory import errors
from zero_memory.cli.common import JsonOption, app, console, handles_errors, local_caller, print_json
from zero_memory.conflicts import bulk, queue
from zero_memory.conflicts import resolve as resolve_service
from zero_memory.conflicts.choice import choice_of
from zero_memory.conflicts.models import Policy

group = typer.Typer(help="The review queue.", no_args_is_help=True)


def register(cli: typer.Typer) -> None:
    cli.add_typer(group, name="conflicts")


@group.command("list")
@handles_errors
def list_command(
    status: Annotated[str, typer.Option("--status", help="pending, resolved, dismissed or all.")] = "pending",
    verdict: Annotated[str | None, typer.Option("--verdict", help="Only this verdict.")] = None,
    shape: Annotated[str | None, typer.Option("--shape", help="pair or single.")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", help="At most this many (1–100).")] = 50,
    json_out: bool = JsonOption,
) -> None:
    """List review-queue rows with both memories."""
    result = queue.list_conflicts(
        app(), local_caller(), status=None if status == "all" else status, verdict=verdict, shape=shape, limit=limit
    )
    if json_out:
        print_json(result)
        return
    console.print(f"{result.pending_count} pending", highlight=False)
    for row in result.conflicts:
        judged = f" {row.confidence:.2f}" if row.confidence is not None else ""
        console.print(
            f"{row.id}  {row.shape} {row.direction or row.verdict}{judged}  [{row.status}]",
            highlight=False,
            markup=False,
        )
        console.print(
            f"  A {row.memory_a.id} ({row.memory_a.scope}): {row.memory_a.content}", highlight=False, markup=False
        )
        if row.memory_b:
            console.print(
                f"  B {row.memory_b.id} ({row.memory_b.scope}): {row.memory_b.content}", highlight=False, markup=False
            )
        if row.rationale:
            console.print(f"  why: {row.rationale}", highlight=False, markup=False)
        if row.proposal:
            proposal = row.proposal
            console.print(
                f"  proposes: {proposal.winner} stays, {proposal.loser} retired ({proposal.reason})"
                f"  — accept with: zm conflicts resolve {row.id} --accept",
                highlight=False,
                markup=False,
            )


@group.command("resolve")
@handles_errors
def resolve(
    dispute_id: Annotated[str | None, typer.Argument(help="The row to settle (omit with --policy).")] = None,
    keep_both: Annotated[bool, typer.Option("--keep-both", help="Both stay (uphold a single-subject row).")] = False,
    winner: Annotated[str | None, typer.Option("--winner", help="The memory that stays.")] = None,
    forget: Annotated[str | None, typer.Option("--forget", help="The memory to forget.")] = None,
    merge: Annotated[str | None, typer.Option("--merge", help="Text of a new memory superseding both.")] = None,
    retire: Annotated[bool, typer.Option("--retire", help="Retire a single-subject row's memory.")] = False,
    accept: Annotated[
        bool, typer.Option("--accept", help="Carry out the row's proposal (a retro row: its winner stays).")
    ] = False,
    policy: Annotated[
        str | None, typer.Option("--policy", help="newest_wins, oldest_wins or keep_both over every pending pair row.")
    ] = None,
    verdict: Annotated[str | None, typer.Option("--verdict", help="With --policy: only this verdict.")] = None,
    json_out: bool = JsonOption,
) -> None:
    """Settle one row, or every pending pair row with a policy."""
    if policy is not None:
        result = bulk.resolve_conflicts(app(), local_caller(), policy=Policy(name=policy, verdict=verdict))  # type: ignore[arg-type]
        if json_out:
            print_json(result)
        else:
            console.print(
                f"resolved {len(result.resolved)}, skipped {len(result.skipped)}, failed {len(result.failed)}",
                highlight=False,
            )
        return
    if dispute_id is None:
        raise errors.validation("pass a dispute id, or --policy")
    choice = choice_of(
        keep_both=keep_both or None,
        winner=winner,
        forget=forget,
        merge=merge,
        retire=retire or None,
        accept=accept or None,
    )
    caller = local_caller()
    outcome = resolve_service.resolve_conflict(app(), caller, dispute_id, choice, human=merge is not None)
    if json_out:
        print_json(outcome)
    else:
        console.print(f"{outcome.dispute_id} resolved: {outcome.resolution}", highlight=False, markup=False)
