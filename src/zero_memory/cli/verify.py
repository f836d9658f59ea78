"""``zm verify``: check the project's anchored memories against this working tree (or a commit).

Runs where the code is. It asks the server for the project's anchors, checks each against the code here
(reading only the files git says changed since each anchor's last verified commit), and reports the outcomes;
the server stamps what still holds, follows what moved and raises one ``outdated`` row per memory whose code
changed or went. With ``--server`` it talks to a running ``zm serve`` over HTTP as any team member would;
without, to this machine's store. ``--hook`` is how the git hooks ``zm setup git`` installs and the
SessionStart briefing run it: bounded in time, quiet, never failing, one line in ``zm capture log``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from zero_memory import errors
from zero_memory.capture import hook_log
from zero_memory.cli.common import JsonOption, app, console, handles_errors, local_caller, print_json, settings
from zero_memory.cli.verify_remote import RemoteVerifier
from zero_memory.clock import utcnow
from zero_memory.memory import verification
from zero_memory.memory.verification import Report, VerifyResult
from zero_memory.workspace.check import Checker
from zero_memory.workspace.git import WORKING_TREE, GitError, Repository

HOOK_SECONDS = 10.0
"""How long ``--hook`` checks anchors before it reports what it has: the rest wait for the next run."""


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
    hook: Annotated[
        bool,
        typer.Option("--hook", help="Run from a git hook: quiet, bounded in time, never failing (see zm capture log)."),
    ] = False,
    seconds: Annotated[
        float | None, typer.Option("--seconds", help=f"Stop checking after this long (--hook: {HOOK_SECONDS:g}).")
    ] = None,
    json_out: bool = JsonOption,
) -> None:
    """Check the project's anchored memories against the code here; flag those whose code changed."""
    directory = (path or Path.cwd()).resolve()
    if hook:
        quietly(directory, seconds=seconds or HOOK_SECONDS, event="git", server=server, token=token)
        return
    started = time.monotonic()
    result, checker = run(directory, commit=commit, project=project, server=server, token=token, seconds=seconds)
    elapsed = time.monotonic() - started
    if json_out:
        print_json({**result.model_dump(), "files_read": checker.files_read, "left": checker.left, "seconds": elapsed})
        return
    _print(result, checker, elapsed)


def run(
    directory: Path,
    *,
    commit: str | None = None,
    project: str | None = None,
    server: str | None = None,
    token: str | None = None,
    seconds: float | None = None,
) -> tuple[VerifyResult, Checker]:
    """One verification of the repository holding ``directory``, reported here or to ``server``."""
    deadline = time.monotonic() + seconds if seconds else None
    repository = Repository.at(directory)
    if repository is None:
        raise errors.validation(f"{directory} is not inside a git repository")
    target = _target(repository, commit)
    hint = project or str(repository.root)
    remote = None
    if server:
        if not token:
            raise errors.validation("--server needs --token (or ZM_TOKEN)")
        remote = RemoteVerifier(server, token)
        scope, records = remote.anchors(hint)
    else:
        scope = verification.project_for(app(), local_caller(), hint)
        records = verification.anchors_of_project(app(), local_caller(), scope)
    checker = Checker(repository, WORKING_TREE if commit is None else target)
    reports = [Report(record, outcome) for record, outcome in checker.check_all(records, deadline=deadline)]
    identity = repository.identity()
    if remote is not None:
        return remote.report(scope, reports, target=target, repository=identity), checker
    result = verification.apply(app(), local_caller(), scope, reports, target=target, repository=identity)
    return result, checker


def quietly(
    directory: Path, *, seconds: float, event: str, server: str | None = None, token: str | None = None
) -> VerifyResult | None:
    """A verification that never fails its caller (a git hook, the SessionStart briefing): what it did, or why
    it did nothing, is one line in the hooks' log. A repository with no project is nothing to verify."""
    try:
        result, checker = run(directory, server=server, token=token, seconds=seconds)
    except (errors.ZMError, GitError, OSError) as error:
        _log(event, f"verify: nothing done ({str(error).splitlines()[0][:300]})")
        return None
    left = f", {checker.left} left for the next run" if checker.left else ""
    _log(
        event,
        f"verify {result.project}: {result.anchors} anchors, {checker.files_read} files read, "
        f"{result.raised} outdated raised, {result.reanchored} followed{left}",
    )
    return result


def _log(event: str, text: str) -> None:
    hook_log.append(settings().home, hook_log.line(utcnow(), "zm", event, None, text))


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


def _print(result: VerifyResult, checker: Checker, seconds: float) -> None:
    left = f", {checker.left} left unchecked (time)" if checker.left else ""
    console.print(
        f"{result.project} at {result.target[:12]}: {result.anchors} anchors, {checker.files_read} files read, "
        f"{result.stamped} verified, {result.reanchored} followed to a new place, {result.raised} outdated "
        f"raised, {result.updated_rows} updated{left} ({seconds:.2f} s)",
        highlight=False,
        markup=False,
    )
    for row in result.rows:
        console.print(f"outdated {row}", highlight=False)
