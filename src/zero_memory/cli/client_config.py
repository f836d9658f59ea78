"""What ``zm setup`` gives each client, and how an entry is put into a configuration file.

``CLIENTS`` is the one place that lists what each client gets: its MCP server
entry for ``zm mcp`` and, for Claude Code, hooks. An entry is applied to the
parsed file (a JSON object, or a TOML document that keeps the user's comments
and layout) as a pure step that reports whether it added, updated or left it
as it was; nothing else in the file is touched, and applying twice changes
nothing the second time.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import tomlkit

from zero_memory import errors

SERVER_NAME = "zero-memory"
# Settings that locate the data and the user: a client starts ``zm mcp`` with an environment of its own.
PASSED_ENV = ("ZM_HOME", "ZM_DATABASE_URL", "ZM_USER")
HOOK_TIMEOUT_S = 30

Change = Literal["added", "updated", "unchanged"]
Document = MutableMapping[str, Any]


@dataclass(frozen=True, slots=True)
class Setup:
    """What the entries are built from: the ``zm`` to run and the environment to hand it."""

    zm: str
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ServerEntry:
    """An MCP server: ``keys`` is where in the file, e.g. ``("mcpServers", "zero-memory")``."""

    file: str
    keys: tuple[str, ...]
    value: dict[str, Any]

    def describe(self) -> str:
        return ".".join(self.keys)

    def apply(self, document: Document) -> Change:
        parent = document
        for key in self.keys[:-1]:
            if key not in parent:
                parent[key] = tomlkit.table(is_super_table=True) if isinstance(document, tomlkit.TOMLDocument) else {}
            parent = parent[key]
            if not isinstance(parent, MutableMapping):
                raise errors.validation(f"{self.file}: {key} is not a table or object; fix it by hand first")
        name = self.keys[-1]
        current = parent.get(name)
        if current is not None and _plain(current) == self.value:
            return "unchanged"
        parent[name] = self.value
        return "updated" if current is not None else "added"


@dataclass(frozen=True, slots=True)
class HookEntry:
    """A Claude Code command hook for one event; ours is recognised by ``marker`` in its command."""

    file: str
    event: str
    command: str
    marker: str

    def describe(self) -> str:
        return f"hooks.{self.event}: {self.marker}"

    def apply(self, document: Document) -> Change:
        hooks = document.setdefault("hooks", {})
        if not isinstance(hooks, MutableMapping):
            raise errors.validation(f"{self.file}: hooks is not an object; fix it by hand first")
        groups = hooks.setdefault(self.event, [])
        if not isinstance(groups, list):
            raise errors.validation(f"{self.file}: hooks.{self.event} is not a list; fix it by hand first")
        for group in groups:
            for hook in group.get("hooks", []) if isinstance(group, dict) else []:
                if isinstance(hook, dict) and self.marker in str(hook.get("command", "")):
                    if hook.get("command") == self.command:
                        return "unchanged"
                    hook["command"] = self.command
                    return "updated"
        groups.append({"hooks": [{"type": "command", "command": self.command, "timeout": HOOK_TIMEOUT_S}]})
        return "added"


Entry = ServerEntry | HookEntry


def _stdio_server(setup: Setup, **extra: str) -> dict[str, Any]:
    server: dict[str, Any] = {**extra, "command": setup.zm, "args": ["mcp"]}
    if setup.env:
        server["env"] = dict(setup.env)
    return server


def _hook_command(setup: Setup, *args: str) -> str:
    prefix = " ".join(f"{name}={_quote(value)}" for name, value in setup.env.items())
    return " ".join(part for part in (prefix, _quote(setup.zm), *args) if part)


CLIENTS: dict[str, Callable[[Setup], list[Entry]]] = {
    "claude-code": lambda s: [
        ServerEntry(".claude.json", ("mcpServers", SERVER_NAME), _stdio_server(s, type="stdio")),
        HookEntry(".claude/settings.json", "SessionStart", _hook_command(s, "context", "--hook"), "context --hook"),
    ],
    "codex": lambda s: [ServerEntry(".codex/config.toml", ("mcp_servers", SERVER_NAME), _stdio_server(s))],
    "cursor": lambda s: [ServerEntry(".cursor/mcp.json", ("mcpServers", SERVER_NAME), _stdio_server(s))],
}


@dataclass(frozen=True, slots=True)
class Applied:
    path: Path
    entry: Entry
    change: Change


def load(path: Path) -> Document:
    """The parsed file; an empty document when it does not exist. A file that does not parse is refused."""
    if not path.exists():
        return tomlkit.document() if path.suffix == ".toml" else {}
    text = path.read_text(encoding="utf-8")
    try:
        if path.suffix == ".toml":
            return tomlkit.parse(text)
        parsed = json.loads(text) if text.strip() else {}
    except (ValueError, tomlkit.exceptions.TOMLKitError) as error:
        raise errors.validation(f"{path}: not valid {path.suffix[1:].upper()} ({error}); fix it first") from None
    if not isinstance(parsed, dict):
        raise errors.validation(f"{path}: expected a JSON object at the top; fix it first")
    return parsed


def dump(path: Path, document: Document) -> str:
    if path.suffix == ".toml":
        return tomlkit.dumps(document)
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def write(path: Path, text: str) -> None:
    """Replace the file in one step, keeping its permissions (a half-written config is worse than none)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    temporary = path.with_name(f".{path.name}.zm-setup")
    temporary.write_text(text, encoding="utf-8")
    os.chmod(temporary, mode)
    os.replace(temporary, path)


def apply_all(home: Path, entries: list[Entry], *, dry: bool) -> list[Applied]:
    """Apply every entry to its file under ``home``; write the files that changed unless ``dry``."""
    applied: list[Applied] = []
    for file in dict.fromkeys(entry.file for entry in entries):
        path = home / file
        document = load(path)
        changes = [Applied(path, e, e.apply(document)) for e in entries if e.file == file]
        if not dry and any(a.change != "unchanged" for a in changes):
            write(path, dump(path, document))
        applied += changes
    return applied


def snippet(path: Path, entries: list[Entry]) -> str:
    """The part of a file's configuration that is ours, as it would be written."""
    document: Document = tomlkit.document() if path.suffix == ".toml" else {}
    for entry in entries:
        entry.apply(document)
    return redact(dump(path, document))


_PASSWORD = re.compile(r"(://[^:/@\s]+:)[^@/\s]+@")


def redact(text: str) -> str:
    """A database URL's password is never shown."""
    return _PASSWORD.sub(r"\1***@", text)


def _plain(value: Any) -> Any:
    unwrap = getattr(value, "unwrap", None)
    return unwrap() if callable(unwrap) else value


def _quote(value: str) -> str:
    return value if re.fullmatch(r"[\w@%+=:,./-]+", value) else "'" + value.replace("'", "'\\''") + "'"
