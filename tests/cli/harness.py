"""Run ``zm`` from any test: in process by default, or as the real binary when that is what is tested.

In process, Click's runner drives the same command tree, parsing, error handling and exit codes as the
binary, with stdout and stderr kept apart; each invocation builds its App from the environment given,
as the binary does (``Settings.from_environ`` and ``build_app``), and closes it when it ends. Only the
embedding model is loaded once per test process instead of once per call: it holds no state, and
loading it is what makes a ``zm`` process slow to start.

The real binary (the installed ``zm`` console script, as a subprocess) is for what only a process can
show: its exit status, its stdin, everything it prints (log lines included), the entry point itself.

Both runners see the test's environment without its ``ZM_*`` and provider-key variables, plus ``env``.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import typer
from typer.testing import CliRunner

from zero_memory.app import App
from zero_memory.bootstrap import build_app
from zero_memory.cli.common import AppSource
from zero_memory.cli.main import cli
from zero_memory.embedding import Embedder, build_embedder
from zero_memory.settings import Settings

ZM = Path(sys.executable).with_name("zm")
# The developer's own configuration never reaches a test's zm.
PRIVATE = ("ZM_", "OPENAI_", "ANTHROPIC_")
BINARY_TIMEOUT_S = 300


@dataclass(frozen=True)
class Result:
    exit_code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


def run(args: Sequence[str], *, env: Mapping[str, str], input: str | None = None, binary: bool = False) -> Result:
    """``zm ARGS`` with ``env`` (and ``input`` on stdin): in process, or the real binary if ``binary``."""
    return (run_binary if binary else run_in_process)(args, env=env, input=input)


def run_in_process(
    args: Sequence[str], *, env: Mapping[str, str], input: str | None = None, app: AppSource | None = None
) -> Result:
    """``app`` replaces how the invocation gets its App (an App, or a builder called with its settings).
    A crash (an exception the CLI does not turn into a refusal) is raised, not returned as exit 1."""
    unset: dict[str, str | None] = {name: None for name in os.environ if name.startswith(PRIVATE)}
    source = build_app_for if app is None else app
    result = CliRunner().invoke(cli, list(args), input=input, env={**unset, **env}, catch_exceptions=False, obj=source)
    return Result(result.exit_code, result.stdout, result.stderr)


def run_binary(args: Sequence[str], *, env: Mapping[str, str], input: str | None = None) -> Result:
    """The installed ``zm``. Arguments may carry lone surrogates: they reach it as the undecodable bytes.
    Without ``input`` its stdin is empty, as in process, never the test's terminal."""
    done = subprocess.run(
        [str(ZM), *args],
        input=input,
        stdin=subprocess.DEVNULL if input is None else None,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="surrogateescape",
        env=environ(env),
        timeout=BINARY_TIMEOUT_S,
        check=False,
    )
    return Result(done.returncode, done.stdout, done.stderr)


def environ(env: Mapping[str, str]) -> dict[str, str]:
    """The environment a real ``zm`` gets: the test's, less its private variables, plus ``env``."""
    return {name: value for name, value in os.environ.items() if not name.startswith(PRIVATE)} | dict(env)


@functools.cache
def embedder(model: str) -> Embedder:
    return build_embedder(model)


def build_app_for(settings: Settings) -> App:
    """What ``zm`` builds for ``settings``, with the embedding model loaded once per test process."""
    return build_app(settings, embedder=embedder(settings.embedding_model))


def app_for(env: Mapping[str, str]) -> App:
    """The App ``zm`` would build in ``env`` (to seed a data directory); the caller closes it."""
    return build_app_for(Settings.from_environ(env))


@dataclass
class Zm:
    """``zm`` on one data directory: ``zm("recall", "x", env={...}, input=...)``; ``binary`` picks the runner
    for every call (a test that proves the real binary), ``binary=`` on a call for that call."""

    env: dict[str, str] = field(default_factory=dict)
    binary: bool = False

    def __call__(
        self, *args: str, env: Mapping[str, str] | None = None, input: str | None = None, binary: bool | None = None
    ) -> Result:
        return run(args, env={**self.env, **(env or {})}, input=input, binary=self.binary if binary is None else binary)


def commands(group: typer.Typer = cli) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every command and group in ``group``'s registry (``typer.main.get_command``) with its path, depth
    first; ``()`` is ``zm`` itself."""

    def walk(command: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
        yield path, command
        subcommands = getattr(command, "commands", {})
        for name in sorted(subcommands):
            yield from walk(subcommands[name], (*path, name))

    return walk(typer.main.get_command(group), ())
