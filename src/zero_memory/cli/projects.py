"""``zm project``: projects and membership."""

from __future__ import annotations

from typing import Annotated

import typer

from zero_memory.access import projects as project_service
from zero_memory.cli.common import JsonOption, app, console, handles_errors, local_caller, print_json
from zero_memory.domain.scopes import ScopeKind

group = typer.Typer(help="Projects and membership.", no_args_is_help=True)


def register(cli: typer.Typer) -> None:
    cli.add_typer(group, name="project")


@group.command("create")
@handles_errors
def create(
    slug: Annotated[str, typer.Argument(help="The project's short name.")],
    path: Annotated[str | None, typer.Option("--path", help="The repository directory.")] = None,
    remote: Annotated[str | None, typer.Option("--remote", help="The git remote URL.")] = None,
    team: Annotated[bool, typer.Option("--team", help="Create a team scope instead of a project.")] = False,
    json_out: bool = JsonOption,
) -> None:
    """Create a project (or team scope) owned by you."""
    caller = local_caller()
    kind = ScopeKind.TEAM if team else ScopeKind.PROJECT
    project = project_service.create_project_as(app().store, caller.uid, slug, path=path, remote=remote, kind=kind)
    if json_out:
        print_json({"scope": project.scope, "path": project.path, "remote": project.remote})
    else:
        console.print(f"created {project.scope}", highlight=False)


@group.command("list")
@handles_errors
def list_projects(json_out: bool = JsonOption) -> None:
    """List the projects you can see, with your role."""
    caller = local_caller()
    found = project_service.projects_of(app().store, caller.uid)
    rows = [{"scope": p.scope, "role": role, "path": p.path, "remote": p.remote} for p, role in found]
    if json_out:
        print_json(rows)
        return
    for row in rows:
        console.print(f"{row['scope']}  {row['role']}  {row['path'] or row['remote'] or ''}", highlight=False)


@group.command("grant")
@handles_errors
def grant(
    scope: Annotated[str, typer.Argument(help="The project or team scope path.")],
    user: Annotated[str, typer.Argument(help="Who gets access.")],
    role: Annotated[str, typer.Argument(help="reader, writer or admin.")],
) -> None:
    """Give a user a role on a project or team scope."""
    caller = local_caller()
    project_service.grant_as_operator(app().store, caller.uid, scope, user, role)
    console.print(f"{user} is {role} of {scope}", highlight=False)
