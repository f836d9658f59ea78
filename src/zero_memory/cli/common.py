"""What every command shares: the app, the caller, JSON output, one-line errors."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ParamSpec, TypeAlias, TypeVar

import typer
from pydantic import BaseModel, ValidationError
from rich.console import Console

from zero_memory import errors
from zero_memory.settings import Settings

# The App, the store and what builds them are imported when a command first asks for its App: a command
# that needs none (zm version, zm setup, zm judge eval) starts without them.
if TYPE_CHECKING:
    from zero_memory.access.caller import Caller
    from zero_memory.app import App

P = ParamSpec("P")
R = TypeVar("R")


class _Console(Console):
    """Rich's console, except that what goes to a pipe or a file is never wrapped: a line a script reads (a
    path, a configuration snippet, a memory's text) stays one line. Rich would wrap it at the width of no
    terminal: COLUMNS if set when the console was made, else 80. On a terminal, Rich wraps to its width."""

    def print(self, *objects: Any, soft_wrap: bool | None = None, **options: Any) -> None:
        super().print(*objects, soft_wrap=not self.is_terminal if soft_wrap is None else soft_wrap, **options)


console = _Console()
err_console = _Console(stderr=True)

JsonOption = typer.Option(False, "--json", help="Print the result as JSON.")


# Where a ``zm`` invocation gets its App: from its caller (``cli(args, obj=...)``, a test runner's
# ``invoke(cli, args, obj=...)``), else ``build_app`` from the environment. Held for one invocation
# only, so two invocations in one process share nothing by accident.
AppSource: TypeAlias = "App | Callable[[Settings], App]"


@dataclass
class _Invocation:
    source: AppSource | None
    built: App | None = None


_running: ContextVar[_Invocation | None] = ContextVar("zm_invocation", default=None)


def begin_invocation(context: typer.Context) -> None:
    """Start one ``zm`` invocation (zm's root callback): its App comes from ``context.obj``, an App or a
    builder, or is built from the environment; an App built here is closed when the invocation ends."""
    invocation = _Invocation(context.obj)
    token = _running.set(invocation)

    def end() -> None:
        _running.reset(token)
        if invocation.built is not None:
            invocation.built.close()

    context.call_on_close(end)


def _invocation() -> _Invocation:
    invocation = _running.get()
    if invocation is None:
        raise RuntimeError("zero_memory.cli.common.app() serves a running zm command; services take an App")
    return invocation


def settings() -> Settings:
    """The invocation's settings: its App's when one was handed in, else read from the environment."""
    source = _invocation().source
    return Settings.from_environ() if source is None or callable(source) else source.settings


def app() -> App:
    """The App of the running ``zm`` invocation.

    Handed in as an App, it is used as it is and stays open (its owner closes it). Otherwise it is built
    on first use, by the handed-in builder or ``build_app``: a command that needs no App (``judge eval``)
    opens no database.
    """
    from zero_memory.bootstrap import build_app

    invocation = _invocation()
    if invocation.source is not None and not callable(invocation.source):
        return invocation.source
    if invocation.built is None:
        invocation.built = (invocation.source or build_app)(settings())
    return invocation.built


def local_caller(client: str = "cli") -> Caller:
    from zero_memory.access.caller import Caller
    from zero_memory.access.users import ensure_local_user

    application = app()
    return Caller(
        uid=ensure_local_user(application.store, application.settings.user),
        client=client,
        author_kind="human" if client == "cli" else "agent",
    )


def fail(message: str, code: int = 1) -> None:
    err_console.print(message, markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def handles_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn a refusal into one line on stderr and a non-zero exit."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except errors.ZMError as error:
            fail(str(error).splitlines()[0])
        except ValidationError as error:
            from zero_memory.memory.validation import invalid_input

            fail(str(invalid_input(error)))
        raise AssertionError("unreachable")

    return wrapper


def to_jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: to_jsonable(v) for k, v in value.items()}
    return value


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(to_jsonable(value), indent=2, ensure_ascii=False, default=str) + "\n")


@contextmanager
def progress(total: int, description: str) -> Iterator[Callable[[int], None]]:
    """A progress bar on a terminal; silent when output is not a terminal."""
    if not err_console.is_terminal or total == 0:
        yield lambda n: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=err_console,
        transient=True,
    ) as bar:
        task = bar.add_task(description, total=total)
        yield lambda n: bar.advance(task, n)
