"""A command group that imports a command's module only when that command is looked up.

Importing every command module costs a ``zm`` process most of a second (the store, the embedding engine,
the MCP types, the HTTP client...), and each command needs a few of them. The root group's table of
commands is a mapping from each name to the module that registers it: ``zm recall`` imports
``cli/memories.py`` and what it needs, ``zm version`` none of them. ``zm --help`` and a mistyped command's
"Did you mean" read every entry, and so import every module, as before.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Iterator, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperGroup

if TYPE_CHECKING:
    # Typer carries its own copy of Click: its groups hold these commands, not the click package's.
    from typer._click import Command


@functools.cache
def _registered(module: str) -> Mapping[str, Command]:
    """The commands ``zero_memory.cli.MODULE``'s ``register(cli)`` adds, as Click commands."""
    commands = typer.Typer(add_completion=False)
    importlib.import_module(f"zero_memory.cli.{module}").register(commands)
    return typer.main.get_group(commands).commands


class LazyCommands(MutableMapping[str, "Command"]):
    """Click's name-to-command table, with each command of ``modules`` imported on first lookup. Its order
    is ``modules``' followed by the commands added directly (``zm --help`` lists them in that order)."""

    def __init__(self, modules: Mapping[str, str], loaded: Mapping[str, Command]) -> None:
        self._modules = dict(modules)
        self._loaded = dict(loaded)

    def __getitem__(self, name: str) -> Command:
        if name not in self._loaded:
            self._loaded[name] = _registered(self._modules[name])[name]
        return self._loaded[name]

    def __setitem__(self, name: str, command: Command) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        if self._modules.pop(name, None) is None and name not in self._loaded:
            raise KeyError(name)
        self._loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self._modules, *self._loaded]))

    def __len__(self) -> int:
        return len(dict.fromkeys([*self._modules, *self._loaded]))


def lazy_group(modules: Mapping[str, str]) -> type[TyperGroup]:
    """A Typer group class (``typer.Typer(cls=...)``) whose commands also include ``modules``: each command's
    name and the module under ``zero_memory.cli`` whose ``register(cli)`` adds it."""

    class LazyGroup(TyperGroup):
        def __init__(self, **attrs: Any) -> None:
            super().__init__(**attrs)
            self.commands = LazyCommands(modules, self.commands)

    return LazyGroup
