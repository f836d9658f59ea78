"""``zm user``: accounts, their bearer tokens, their provider keys."""

from __future__ import annotations

from typing import Annotated

import typer

from zero_memory.access import users as accounts
from zero_memory.cli.common import JsonOption, app, console, handles_errors, print_json

group = typer.Typer(help="Accounts and their bearer tokens.", no_args_is_help=True)


@group.command("add")
@handles_errors
def add(
    name: Annotated[str, typer.Argument(help="The user's id: lowercase letters, digits, - and _.")],
    json_out: bool = JsonOption,
) -> None:
    """Create a user and print their first bearer token (shown once)."""
    with app().store.tx(write=True) as tx:
        accounts.add_user(tx, name)
        token = accounts.issue_token(tx, name)
    if json_out:
        print_json({"user": name, "token": token})
    else:
        console.print(f"created user {name}; bearer token (shown once):", highlight=False)
        console.print(token, highlight=False, markup=False)


@group.command("list")
@handles_errors
def list_users(json_out: bool = JsonOption) -> None:
    """List users."""
    with app().store.tx() as tx:
        users = tx.list_users()
    if json_out:
        print_json(
            [
                {
                    "id": u.id,
                    "display_name": u.display_name,
                    "created_at": u.created_at.isoformat(),
                    "local": u.is_local,
                }
                for u in users
            ]
        )
        return
    for user in users:
        console.print(f"{user.id}{'  (local)' if user.is_local else ''}", highlight=False)


@group.command("token")
@handles_errors
def token(
    name: Annotated[str, typer.Argument(help="The user.")],
    revoke_others: Annotated[bool, typer.Option("--revoke-others", help="Revoke the user's earlier tokens.")] = False,
    json_out: bool = JsonOption,
) -> None:
    """Issue a new bearer token for a user (shown once)."""
    with app().store.tx(write=True) as tx:
        if revoke_others and tx.get_user(name) is not None:
            from zero_memory.clock import utcnow

            tx.revoke_tokens(name, utcnow())
        new_token = accounts.issue_token(tx, name)
    print_json({"user": name, "token": new_token}) if json_out else console.print(
        new_token, highlight=False, markup=False
    )
