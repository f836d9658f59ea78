"""The memory tools from a shell: remember, recall, get, forget, restore, reaffirm, close-loop, move, link."""

from __future__ import annotations

from typing import Annotated

import typer

from zero_memory.cli.common import JsonOption, app, console, handles_errors, local_caller, print_json
from zero_memory.domain.memory import Kind
from zero_memory.domain.records import Channel
from zero_memory.memory import lifecycle
from zero_memory.memory.models import AnchorSpec, LinkSpec, RememberRequest
from zero_memory.memory.recall import recall as recall_service
from zero_memory.memory.write import remember as remember_service


def register(cli: typer.Typer) -> None:
    for command in (remember, recall, get, forget, restore, reaffirm, close_loop, move, link):
        cli.command(name=command.__name__.replace("_", "-"))(command)


@handles_errors
def remember(
    text: Annotated[str, typer.Argument(help="The memory: one self-contained statement.")],
    kind: Annotated[Kind, typer.Option("--kind", "-k", help="What kind of memory this is.")],
    project: Annotated[
        str | None, typer.Option("--project", "-p", help="Project hint: path, git remote or name.")
    ] = None,
    scope: Annotated[str | None, typer.Option("--scope", help="A scope path, or core / personal.")] = None,
    supersedes: Annotated[
        list[str] | None, typer.Option("--supersedes", help="Id of a memory this one replaces.")
    ] = None,
    provisional: Annotated[
        bool, typer.Option("--provisional", help="Write as a provisional capture (rank 0).")
    ] = False,
    anchor: Annotated[
        list[str] | None,
        typer.Option("--anchor", help="Code the memory describes: PATH or PATH::SYMBOL, from the repository's root."),
    ] = None,
    json_out: bool = JsonOption,
) -> None:
    """Store a memory."""
    links = [LinkSpec(type="supersedes", dst=dst) for dst in supersedes or []]
    anchors = [AnchorSpec(path=a.partition("::")[0], symbol=a.partition("::")[2] or None) for a in anchor or []]
    result = remember_service(
        app(),
        local_caller(),
        RememberRequest(
            content=text,
            kind=kind,
            scope=scope,
            project_hint=project,
            links=links,
            provisional=provisional,
            anchors=anchors,
        ),
    )
    if json_out:
        print_json(result)
        return
    console.print(f"{result.status} {result.id} in {result.scope}", highlight=False)
    if result.routed_to_project:
        console.print(
            f"routed to {result.routed_to_project['project']}: {result.routed_to_project['reason']}",
            highlight=False,
            markup=False,
        )
    for old in result.superseded:
        console.print(f"superseded {old}", highlight=False)
    for placed in result.anchors:
        label = f"{placed.path}::{placed.symbol}" if placed.symbol else placed.path
        console.print(f"anchored {label} ({placed.origin}, {placed.state})", highlight=False, markup=False)
    for similar in result.similar_existing:
        console.print(
            f"similar {similar.id} ({similar.similarity:.2f}) {similar.preview}", highlight=False, markup=False
        )


@handles_errors
def recall(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    project: Annotated[str | None, typer.Option("--project", "-p", help="Project hint.")] = None,
    scope: Annotated[list[str] | None, typer.Option("--scope", help="Scope to search; repeat; * for all.")] = None,
    kind: Annotated[list[Kind] | None, typer.Option("--kind", "-k", help="Only these kinds; repeat.")] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", help="At most this many hits (1–50).")] = 10,
    json_out: bool = JsonOption,
) -> None:
    """Find memories by meaning and words."""
    result = recall_service(
        app(),
        local_caller(),
        query,
        scopes_arg=scope,
        kinds=kind,
        limit=limit,
        project_hint=project,
        channel=Channel.CLI,
    )
    if json_out:
        print_json(result)
        return
    if not result.hits:
        console.print("no memories found")
    for hit in result.hits:
        flag = " [disputed]" if hit.disputed else ""
        console.print(f"{hit.id}  {hit.kind.value} · {hit.scope}{flag}", highlight=False, markup=False)
        console.print(f"  {hit.content}", highlight=False, markup=False)


@handles_errors
def get(
    memory_id: Annotated[str, typer.Argument(help="A memory id.")],
    limit: Annotated[
        int, typer.Option("--limit", "-n", help=f"Audit rows to show, newest first (1–{lifecycle.MAX_AUDIT_PAGE}).")
    ] = lifecycle.AUDIT_PAGE,
    cursor: Annotated[str | None, typer.Option("--cursor", help="Continue with older audit rows.")] = None,
    json_out: bool = JsonOption,
) -> None:
    """Show one memory with its links, version history, audit trail (newest first) and disputes."""
    result = lifecycle.get_memory(app(), local_caller(), memory_id, limit=limit, cursor=cursor)
    if json_out:
        print_json(result)
        return
    m = result.memory
    console.print(f"{m.id}  {m.kind.value} · {m.scope} · rank {m.rank} · {m.status}", highlight=False)
    console.print(m.content, highlight=False, markup=False)
    for entry in result.history:
        console.print(f"  replaced {entry.id}: {entry.content}", highlight=False, markup=False)
    for row in result.audit:
        console.print(f"  {row.at} {row.actor} {row.action}", highlight=False, markup=False)
    if result.next_cursor:
        console.print(f"older audit rows: zm get {m.id} --cursor {result.next_cursor}", highlight=False)


@handles_errors
def forget(
    memory_id: Annotated[str, typer.Argument(help="A memory id.")],
    reason: Annotated[str | None, typer.Option("--reason", help="Why.")] = None,
    json_out: bool = JsonOption,
) -> None:
    """Invalidate a memory (reversible with restore)."""
    result = lifecycle.forget(app(), local_caller(), memory_id, reason)
    print_json(result) if json_out else console.print(f"{result.id} {result.status}", highlight=False)


@handles_errors
def restore(memory_id: Annotated[str, typer.Argument(help="A memory id.")], json_out: bool = JsonOption) -> None:
    """Undo any invalidation of a memory."""
    result = lifecycle.restore_memory(app(), local_caller(), memory_id)
    print_json(result) if json_out else console.print(f"{result.id} {result.status}", highlight=False)


@handles_errors
def reaffirm(
    memory_id: Annotated[str, typer.Argument(help="A core fact or reference.")], json_out: bool = JsonOption
) -> None:
    """Vouch that a core fact or reference is still true: its freshness budget starts again (clears stale_days)."""
    result = lifecycle.reaffirm(app(), local_caller(), memory_id)
    if json_out:
        print_json(result)
        return
    was = f" (was {result.stale_days_before} days past its budget)" if result.stale_days_before else ""
    console.print(f"{result.id} re-affirmed{was}; its freshness budget starts today", highlight=False)


@handles_errors
def close_loop(
    memory_id: Annotated[str, typer.Argument(help="A task or open-question id.")],
    note: Annotated[str | None, typer.Option("--note", help="How it was closed.")] = None,
    json_out: bool = JsonOption,
) -> None:
    """Close an open loop (task or open-question)."""
    result = lifecycle.close_loop(app(), local_caller(), memory_id, note)
    print_json(result) if json_out else console.print(f"{result.id} {result.status}", highlight=False)


@handles_errors
def move(
    memory_ids: Annotated[list[str], typer.Argument(help="Memory ids.")],
    scope: Annotated[str | None, typer.Option("--scope", help="Target scope path, core or personal.")] = None,
    project: Annotated[str | None, typer.Option("--project", "-p", help="Target project hint.")] = None,
    json_out: bool = JsonOption,
) -> None:
    """Move memories to another scope."""
    result = lifecycle.move_memories(app(), local_caller(), memory_ids, scope=scope, project_hint=project)
    if json_out:
        print_json(result)
        return
    console.print(f"moved {len(result.moved)}, unchanged {len(result.unchanged)}, failed {len(result.failed)}")
    for failure in result.failed:
        console.print(f"  {failure.id}: {failure.error}", highlight=False, markup=False)


@handles_errors
def link(
    src: Annotated[str, typer.Argument(help="Source memory id.")],
    dst: Annotated[str, typer.Argument(help="Destination memory id.")],
    link_type: Annotated[str, typer.Option("--type", help="relates_to, derived_from or contradicts.")] = "relates_to",
    json_out: bool = JsonOption,
) -> None:
    """Relate two memories."""
    result = lifecycle.link(app(), local_caller(), src, dst, link_type)
    print_json(result) if json_out else console.print(f"{result.type} {result.src} → {result.dst}", highlight=False)
