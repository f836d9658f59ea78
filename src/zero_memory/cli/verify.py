"""``zm verify``: check the project's anchored memories against this working tree (or a commit).

Runs where the code is. It asks the server for the project's anchors, checks each against the code here
(reading only the files git says changed since each anchor's last verified commit), and reports the outcomes;
the server stamps what still holds, follows what moved and raises one ``outdated`` row per memory whose code
changed or went. With ``--server`` it talks to a running ``zm serve`` over HTTP as any team member would;
without, to this machine's store.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from zero_memory import errors
from zero_memory.cli.common import JsonOption, app, console, handles_errors, local_caller, print_json
from zero_memory.cli.verify_remote import RemoteVerifier
from zero_memory.memory import verification
from zero_memory.memory.verification import Report, VerifyResult
from zero_memory.workspace.check import Checker
from zero_memory.workspace.git import WORKING_TREE, GitError, Repository


def register(cli: typer.Typer) -> None:
    cli.command(name="verify")(verify)


@handles_errors
def verify(
    path: Annotated[Path | None, typer.Argument(help="A directory inside the repository (default: here).")] = None,
    commit: Annotated[
        str | None, typer.Option("--commit", help="Verify against this commit instead of the working tree.")
    ] = None,
    project: Annotated[
        str | None, typer.Option("--project", "-p", help="The project (default: the one this repository is).")
    ] = None,
    server: Annotated[
        str | None, typer.Option("--server", envvar="ZM_SERVER_URL", help="A zm serve to report to over HTTP.")
    ] = None,
    token: Annotated[
        str | None, typer.Option("--token", envvar="ZM_TOKEN", help="Your bearer token for --server.")
    ] = None,
    json_out: bool = JsonOption,
) -> None:
    """Check the project's anchored memories against the code here; flag those whose code changed."""
    started = time.monotonic()
    repository = Repository.at((path or Path.cwd()).resolve())
    if repository is None:
        raise errors.validation(f"{path or Path.cwd()} is not inside a git repository")
    target = _target(repository, commit)
    hint = project or str(repository.root)
    if server:
        if not token:
            raise errors.validation("--server needs --token (or ZM_TOKEN)")
        remote = RemoteVerifier(server, token)
        scope, records = remote.anchors(hint)
    else:
        caller = local_caller()
        scope = verification.project_for(app(), caller, hint)
        records = verification.anchors_of_project(app(), caller, scope)
    checker = Checker(repository, WORKING_TREE if commit is None else target)
    reports = [Report(record, outcome) for record, outcome in checker.check_all(records)]
    identity = repository.identity()
    if server:
        result = remote.report(scope, reports, target=target, repository=identity)
    else:
        result = verification.apply(app(), local_caller(), scope, reports, target=target, repository=identity)
    if json_out:
        print_json({**result.model_dump(), "files_read": checker.files_read, "seconds": time.monotonic() - started})
        return
    _print(result, checker.files_read, time.monotonic() - started)


def _target(repository: Repository, commit: str | None) -> str:
    """The commit the outcomes are stamped with: ``--commit``, else HEAD (the working tree is read, and a file
    changed since HEAD is read again next time, since git names it)."""
    try:
        if commit is not None:
            return repository.resolve(commit)
    except GitError as error:
        raise errors.validation(f"--commit: {commit!r} is not a commit of this repository") from error
    head = repository.head()
    if head is None:
        raise errors.validation(f"{repository.root} has no commit yet")
    return head


def _print(result: VerifyResult, files_read: int, seconds: float) -> None:
    console.print(
        f"{result.project} at {result.target[:12]}: {result.anchors} anchors, {files_read} files read, "
        f"{result.stamped} verified, {result.reanchored} followed to a new place, {result.raised} outdated "
        f"raised, {result.updated_rows} updated ({seconds:.2f} s)",
        highlight=False,
        markup=False,
    )
    for row in result.rows:
        console.print(f"outdated {row}", highlight=False)
