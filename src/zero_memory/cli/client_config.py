"""What ``zm setup`` gives each client, and how an entry is put into a configuration file.

``CLIENTS`` is the one place that lists what each client gets: its MCP server
entry for ``zm mcp``, for Claude Code hooks, and with capture on the program
that sends each session's conversation to ``zm hook`` (docs/capture.md). An entry is applied to the
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
# What a capture hook needs besides: the extraction model. Never a key (a secret in a client's config file):
# the hook pays with the key stored by ``zm user key set``, or one in the client's own environment.
CAPTURE_ENV = ("ZM_JUDGE_PROVIDER", "ZM_JUDGE_BASE_URL", "ZM_HYGIENE_FAST_MODEL", "ZM_EXTRACT_MODEL")
HOOK_TIMEOUT_S = 30
CAPTURE_TIMEOUT_S = 120
"""A capture hook waits for its extraction; a client that stops it sooner leaves the chunk to ``zm serve``."""
CAPTURE_EVENTS = ("PreCompact", "SessionEnd")
CODEX_HOOK = ("hook", "codex")

Change = Literal["added", "updated", "unchanged"]
Document = MutableMapping[str, Any]


@dataclass(frozen=True, slots=True)
class Setup:
    """What the entries are built from: the ``zm`` to run and the environment to hand it."""

    zm: str
    env: dict[str, str] = field(default_factory=dict)
    capture: bool = False
    model_env: dict[str, str] = field(default_factory=dict)
    """``CAPTURE_ENV`` as set where ``zm setup`` runs; handed to capture hooks only."""


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
    timeout: int = HOOK_TIMEOUT_S

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
                    if (hook.get("command"), hook.get("timeout")) == (self.command, self.timeout):
                        return "unchanged"
                    hook["command"], hook["timeout"] = self.command, self.timeout
                    return "updated"
        groups.append({"hooks": [{"type": "command", "command": self.command, "timeout": self.timeout}]})
        return "added"


@dataclass(frozen=True, slots=True)
class NotifyEntry:
    """Codex's ``notify``: the one program it runs after every turn (a top-level argv list); ours ends in
    ``hook codex``. Someone else's is never replaced: Codex runs only one, and theirs can call ours."""

    file: str
    argv: tuple[str, ...]

    def describe(self) -> str:
        return "notify: " + " ".join(CODEX_HOOK)

    def apply(self, document: Document) -> Change:
        current = _plain(document.get("notify"))
        wanted = list(self.argv)
        if current == wanted:
            return "unchanged"
        if current is not None and not _is_codex_hook(current):
            # Not echoed: the user's own command line may carry anything.
            raise errors.validation(
                f"{self.file}: notify already runs another program and Codex runs only one; call "
                f'`{" ".join(wanted)} "$1"` from it, or remove it and run zm setup codex --capture again'
            )
        document["notify"] = wanted
        return "added" if current is None else "updated"


def _is_codex_hook(argv: Any) -> bool:
    return isinstance(argv, list) and tuple(argv[-2:]) == CODEX_HOOK


Entry = ServerEntry | HookEntry | NotifyEntry


def _stdio_server(setup: Setup, **extra: str) -> dict[str, Any]:
    server: dict[str, Any] = {**extra, "command": setup.zm, "args": ["mcp"]}
    if setup.env:
        server["env"] = dict(setup.env)
    return server


def _hook_command(setup: Setup, *args: str, env: dict[str, str] | None = None) -> str:
    given = setup.env if env is None else env
    prefix = " ".join(f"{name}={_quote(value)}" for name, value in given.items())
    return " ".join(part for part in (prefix, _quote(setup.zm), *args) if part)


def _claude_code(s: Setup) -> list[Entry]:
    entries: list[Entry] = [
        ServerEntry(".claude.json", ("mcpServers", SERVER_NAME), _stdio_server(s, type="stdio")),
        HookEntry(".claude/settings.json", "SessionStart", _hook_command(s, "context", "--hook"), "context --hook"),
    ]
    if s.capture:
        command = _hook_command(s, "hook", "claude-code", env={**s.env, **s.model_env})
        entries += [
            HookEntry(".claude/settings.json", event, command, "hook claude-code", CAPTURE_TIMEOUT_S)
            for event in CAPTURE_EVENTS
        ]
    return entries


def _codex(s: Setup) -> list[Entry]:
    entries: list[Entry] = [ServerEntry(".codex/config.toml", ("mcp_servers", SERVER_NAME), _stdio_server(s))]
    if s.capture:
        # notify is an argv with no environment of its own: env(1) hands the settings over.
        settings = [f"{name}={value}" for name, value in {**s.env, **s.model_env}.items()]
        entries.append(
            NotifyEntry(".codex/config.toml", (*(["env", *settings] if settings else []), s.zm, *CODEX_HOOK))
        )
    return entries


CLIENTS: dict[str, Callable[[Setup], list[Entry]]] = {
    "claude-code": _claude_code,
    "codex": _codex,
    "cursor": lambda s: [ServerEntry(".cursor/mcp.json", ("mcpServers", SERVER_NAME), _stdio_server(s))],
}
CAPTURE_CLIENTS = ("claude-code", "codex")


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
