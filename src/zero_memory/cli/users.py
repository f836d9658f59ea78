"""``zm user``: accounts, their bearer tokens, their provider keys."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from zero_memory import errors
from zero_memory.access import users as accounts
from zero_memory.capture import budget
from zero_memory.cli import oauth
from zero_memory.cli.common import JsonOption, app, console, handles_errors, local_caller, print_json
from zero_memory.judge import keys
from zero_memory.memory import erasure

group = typer.Typer(help="Accounts, their bearer tokens and their provider keys.", no_args_is_help=True)


def register(cli: typer.Typer) -> None:
    cli.add_typer(group, name="user")


@group.command("add")
@handles_errors
def add(
    name: Annotated[str, typer.Argument(help="The user's id: lowercase letters, digits, - and _.")],
    json_out: bool = JsonOption,
) -> None:
    """Create a user and print their first bearer token (shown once)."""
    token = accounts.create_account(app().store, name)
    if json_out:
        print_json({"user": name, "token": token})
    else:
        console.print(f"created user {name}; bearer token (shown once):", highlight=False)
        console.print(token, highlight=False, markup=False)


@group.command("list")
@handles_errors
def list_users(json_out: bool = JsonOption) -> None:
    """List users."""
    users = accounts.list_accounts(app().store)
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
    application = app()
    new_token = accounts.reissue_token(application.store, name, revoke_others=revoke_others, at=application.clock())
    print_json({"user": name, "token": new_token}) if json_out else console.print(
        new_token, highlight=False, markup=False
    )


@group.command("delete")
@handles_errors
def delete(
    name: Annotated[str, typer.Argument(help="The user to delete.")],
    confirm: Annotated[
        str | None,
        typer.Option(
            "--confirm",
            metavar="NAME",
            help="The user's name again, to confirm (asked at a prompt when on a terminal).",
            show_default=False,
        ),
    ] = None,
    export: Annotated[
        Path | None,
        typer.Option(
            "--export",
            metavar="PATH",
            help="A new file for the user's export (default: ZM_HOME/exports/NAME-TIME.jsonl).",
            show_default=False,
        ),
    ] = None,
    json_out: bool = JsonOption,
) -> None:
    """Delete a user for good: export their memories to a file, then remove them and every row of theirs.

    Memories they wrote to a project or team another member reads stay, under a pseudonym.

    The only command that removes rows: only a backup brings them back.
    """
    application = app()
    erasure.account(application, name)
    if confirm is None:
        if not sys.stdin.isatty():
            raise errors.validation(f"confirm: pass --confirm {name} to delete the account (no terminal to ask on)")
        confirm = typer.prompt(f"This deletes {name} and their memories for good. Type the name to confirm", err=True)
    done = erasure.delete_account(application, name, confirm=confirm, export_path=export)
    if json_out:
        print_json({"user": name, **done.to_dict()})
        return
    kept = f"; {done.kept_memories} team memories stay, as {done.pseudonym}" if done.kept_memories else ""
    console.print(
        f"deleted {name}: {done.removed.get('memories', 0)} memories removed{kept}; "
        f"their export ({done.exported} memories) is in {done.export_path}",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )


# -- zm user key ----------------------------------------------------------------

key_group = typer.Typer(
    help="A user's own provider key: their judge calls are paid with it (stored encrypted with ZM_SECRET_KEY).",
    no_args_is_help=True,
)
group.add_typer(key_group, name="key")

UserOption = typer.Option("--user", help="The user (default: the local user, ZM_USER).", show_default=False)
ProviderOption = typer.Option(
    "--provider", help="openai or anthropic (default: ZM_JUDGE_PROVIDER).", show_default=False
)
MAX_KEY_CHARS = 4_096


def _user(name: str | None) -> str:
    return name or local_caller().uid


def _read_key() -> str:
    """The key from a hidden prompt on a terminal, else from stdin — never from argv (shell history, ps)."""
    if sys.stdin.isatty():
        entered: str = typer.prompt("API key (input hidden)", hide_input=True, err=True)
        return entered
    return sys.stdin.read(MAX_KEY_CHARS + 1)


@key_group.command("set", context_settings={"allow_extra_args": True})
@handles_errors
def key_set(
    ctx: typer.Context,
    user: Annotated[str | None, UserOption] = None,
    provider: Annotated[str | None, ProviderOption] = None,
    json_out: bool = JsonOption,
) -> None:
    """Store a user's provider key, read from a hidden prompt or stdin (`zm user key set < key.txt`)."""
    if ctx.args:
        # Taken in and refused here: the parser's own error would echo the stray argument — the key.
        raise errors.validation(
            "the key is not taken as an argument (it stays in shell history and the process list): "
            "pipe it on stdin or type it at the prompt — and rotate a key that was typed on a command line"
        )
    uid = _user(user)
    application = app()
    name = keys.key_provider(application.settings, provider)
    keys.require_user(application.store, uid)
    key = _read_key()
    if len(key) > MAX_KEY_CHARS:
        raise errors.validation(f"the key is longer than {MAX_KEY_CHARS} characters: is that the right input?")
    status = keys.set_owner_key(application.settings, application.store, uid, name, key, at=application.clock())
    if json_out:
        print_json(status.to_dict())
        return
    ending = f" (ending {status.last4})" if status.last4 else ""
    console.print(
        f"stored the {status.provider} key of {uid}{ending}, encrypted; their judge calls now use it",
        highlight=False,
        markup=False,
    )


@key_group.command("show")
@handles_errors
def key_show(
    user: Annotated[str | None, UserOption] = None,
    provider: Annotated[str | None, ProviderOption] = None,
    json_out: bool = JsonOption,
) -> None:
    """Say whether a user has a provider key stored, and its last 4 characters."""
    application = app()
    status = keys.key_status(application.settings, application.store, _user(user), provider)
    if json_out:
        print_json(status.to_dict())
    elif not status.set:
        console.print(
            f"{status.user} has no {status.provider} key: their judge calls use the server's",
            highlight=False,
            markup=False,
        )
    else:
        ending = f", ending {status.last4}" if status.last4 else ""
        console.print(f"{status.user} has an {status.provider} key stored{ending}", highlight=False, markup=False)


@key_group.command("clear")
@handles_errors
def key_clear(
    user: Annotated[str | None, UserOption] = None,
    provider: Annotated[str | None, ProviderOption] = None,
    json_out: bool = JsonOption,
) -> None:
    """Forget a user's provider key; their judge calls go back to the server's key."""
    uid = _user(user)
    application = app()
    name = keys.key_provider(application.settings, provider)
    removed = keys.clear_owner_key(application.settings, application.store, uid, name, at=application.clock())
    if json_out:
        print_json({"user": uid, "provider": name, "cleared": removed})
    elif removed:
        console.print(f"cleared the {name} key of {uid}", highlight=False, markup=False)
    else:
        console.print(f"{uid} had no {name} key stored", highlight=False, markup=False)


# -- zm user budget -------------------------------------------------------------

budget_group = typer.Typer(
    help="A user's daily token allowance for extracting memories from conversations (capture).",
    no_args_is_help=True,
)
group.add_typer(budget_group, name="budget")


@budget_group.command("show")
@handles_errors
def budget_show(user: Annotated[str | None, UserOption] = None, json_out: bool = JsonOption) -> None:
    """A user's allowance, where it comes from, and what is spent today (UTC)."""
    uid = _user(user)
    application = app()
    keys.require_user(application.store, uid)
    status = budget.status(application, uid, application.clock())
    if json_out:
        print_json(status)
        return
    origin = "their own" if status.source == "user" else "the server's (ZM_EXTRACT_DAILY_TOKENS)"
    console.print(
        f"{uid}: {status.spent_today:,} of {status.daily_tokens:,} tokens spent today, {origin}; "
        f"renews at {status.resets_at}",
        highlight=False,
        markup=False,
    )


@budget_group.command("set")
@handles_errors
def budget_set(
    daily_tokens: Annotated[int, typer.Argument(help="Tokens per UTC day; 0 turns their capture off.", min=0)],
    user: Annotated[str | None, UserOption] = None,
    json_out: bool = JsonOption,
) -> None:
    """Give a user an allowance of their own, instead of the server's."""
    uid = _user(user)
    application = app()
    budget.set_budget(application.store, uid, daily_tokens, at=application.clock())
    if json_out:
        print_json(budget.status(application, uid, application.clock()))
        return
    console.print(f"{uid} may now spend {daily_tokens:,} extraction tokens a day", highlight=False, markup=False)


@budget_group.command("clear")
@handles_errors
def budget_clear(user: Annotated[str | None, UserOption] = None, json_out: bool = JsonOption) -> None:
    """Put a user back on the server's allowance (ZM_EXTRACT_DAILY_TOKENS)."""
    uid = _user(user)
    application = app()
    removed = budget.clear_budget(application.store, uid, at=application.clock())
    if json_out:
        print_json({"user": uid, "cleared": removed})
    elif removed:
        console.print(f"{uid} is back on the server's allowance", highlight=False, markup=False)
    else:
        console.print(f"{uid} had no allowance of their own", highlight=False, markup=False)


# After key and budget: zm user --help lists it last.
group.add_typer(oauth.group, name="oauth")
