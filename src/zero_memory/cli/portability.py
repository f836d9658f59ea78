"""``zm portability``: proposals to move project facts into your core scope."""

from __future__ import annotations

from typing import Annotated

import typer

from zero_memory.cli.common import JsonOption, app, console, handles_errors, local_caller, print_json
from zero_memory.hygiene import portability

group = typer.Typer(help="Portability proposals.", no_args_is_help=True)


def register(cli: typer.Typer) -> None:
    cli.add_typer(group, name="portability")


@group.command("list")
@handles_errors
def list_command(
    status: Annotated[str, typer.Option("--status", help="pending, approved, dismissed, closed or all.")] = "pending",
    json_out: bool = JsonOption,
) -> None:
    """List proposals with confidence and rationale."""
    result = portability.list_portability(app(), local_caller(), None if status == "all" else status)
    if json_out:
        print_json(result)
        return
    console.print(f"{result.pending_count} pending", highlight=False)
    for proposal in result.proposals:
        confidence = f"{proposal.confidence:.2f}" if proposal.confidence is not None else "-"
        console.print(
            f"{proposal.id} [{proposal.status}] {confidence} {proposal.original_scope}", highlight=False, markup=False
        )
        if proposal.memory:
            console.print(f"  {proposal.memory.content}", highlight=False, markup=False)
        if proposal.rationale:
            console.print(f"  why: {proposal.rationale}", highlight=False, markup=False)


@group.command("approve")
@handles_errors
def approve(candidate_id: Annotated[str, typer.Argument(help="A proposal id.")], json_out: bool = JsonOption) -> None:
    """Move the memory to your core scope (reversible with zm move)."""
    result = portability.resolve_portability(app(), local_caller(), candidate_id, True)
    print_json(result) if json_out else console.print(f"moved {result.memory_id} to {result.scope}", highlight=False)


@group.command("dismiss")
@handles_errors
def dismiss(candidate_id: Annotated[str, typer.Argument(help="A proposal id.")], json_out: bool = JsonOption) -> None:
    """Dismiss a proposal for good."""
    result = portability.resolve_portability(app(), local_caller(), candidate_id, False)
    print_json(result) if json_out else console.print(f"dismissed {result.candidate_id}", highlight=False)
