"""``zm user oauth``: the MCP clients a user authorized through OAuth, and revoking them."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from zero_memory import errors
from zero_memory.access import oauth
from zero_memory.cli.common import JsonOption, app, console, handles_errors, print_json
from zero_memory.domain.oauth import OAuthGrant

group = typer.Typer(
    help="MCP clients a user authorized through OAuth (the dashboard's Clients page); revoke them.",
    no_args_is_help=True,
)

NameArgument = typer.Argument(help="The user.", show_default=False)


def _row(grant: OAuthGrant) -> dict[str, Any]:
    return {
        "grant_id": grant.id,
        "client_id": grant.client_id,
        "client_name": grant.client_name,
        "approved_at": grant.created_at.isoformat(),
        "last_token_at": grant.last_used_at.isoformat() if grant.last_used_at else None,
        "revoked_at": grant.revoked_at.isoformat() if grant.revoked_at else None,
    }


@group.command("list")
@handles_errors
def list_grants(name: Annotated[str, NameArgument], json_out: bool = JsonOption) -> None:
    """List the clients a user authorized and has not revoked."""
    grants = oauth.grants_of(app().store, name)
    if json_out:
        print_json([_row(g) for g in grants])
        return
    if not grants:
        console.print(f"{name} has authorized no OAuth client", highlight=False, markup=False)
    for grant in grants:
        last = grant.last_used_at.isoformat(timespec="seconds") if grant.last_used_at else "never"
        console.print(
            f"{grant.id}  {grant.client_name}  (client {grant.client_id}; approved "
            f"{grant.created_at.isoformat(timespec='seconds')}; last token {last})",
            highlight=False,
            markup=False,
        )


@group.command("revoke")
@handles_errors
def revoke(
    name: Annotated[str, NameArgument],
    grant_id: Annotated[
        str | None, typer.Argument(help="The grant to revoke (zm user oauth list).", show_default=False)
    ] = None,
    client: Annotated[
        str | None, typer.Option("--client", help="Revoke every grant of this client id.", show_default=False)
    ] = None,
    everything: Annotated[bool, typer.Option("--all", help="Revoke every client the user authorized.")] = False,
    json_out: bool = JsonOption,
) -> None:
    """Revoke what a user authorized: its access and refresh tokens stop working at once."""
    if sum((grant_id is not None, client is not None, everything)) != 1:
        raise errors.validation("name exactly one of GRANT_ID, --client CLIENT_ID or --all")
    application = app()
    store, now = application.store, application.clock()
    if everything:
        revoked = oauth.revoke_all(store, name, by="operator", now=now)
    elif client is not None:
        matching = [g for g in oauth.grants_of(store, name) if g.client_id == client]
        if not matching:
            raise errors.not_found(f"authorized client of {name} with that client id (zm user oauth list {name})")
        revoked = [oauth.revoke_grant(store, name, g.id, by="operator", now=now) for g in matching]
    else:
        assert grant_id is not None
        revoked = [oauth.revoke_grant(store, name, grant_id, by="operator", now=now)]
    if json_out:
        print_json({"user": name, "revoked": [g.id for g in revoked]})
        return
    for grant in revoked:
        console.print(f"revoked {grant.id} ({grant.client_name}) of {name}", highlight=False, markup=False)
    if not revoked:
        console.print(f"{name} had no OAuth client to revoke", highlight=False, markup=False)
