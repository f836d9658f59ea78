"""What ``zm setup`` gives each client, and how an entry is put into a configuration file.

``CLIENTS`` is the one place that lists what each client gets: its MCP server
entry for ``zm mcp``, for Claude Code hooks, and with capture on the program
that sends each session's conversation to ``zm hook`` (docs/capture.md). An entry is applied to the
parsed file (a JSON object, or a TOML document that keeps the user's comments
and layout) as a pure step that reports whether it added, updated or left it
as it was, and which keys it added, changed or removed (``config_merge``): the
keys the user added inside our entry are kept, nothing else in the file is
touched, and applying twice changes nothing the second time.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shlex
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import tomlkit

from zero_memory import errors
from zero_memory.cli.config_merge import Edit, dropping, merge, plain

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
BRIEFING_MATCHER = "startup|clear|compact"
"""The SessionStart sources that begin work with an empty or summarised context. Not ``resume``: a resumed
conversation still holds its briefing, and a second one would repeat it."""

# Settings of an HTTP server: Codex refuses them beside ``command`` ("url is not supported for stdio"); in a
# JSON client they would describe another transport than the ``command`` we write.
CODEX_HTTP_KEYS = dropping(
    (
        "url",
        "bearer_token",
        "bearer_token_env_var",
        "http_headers",
        "env_http_headers",
        "oauth_resource",
        "client_id",
        "client_secret_env_var",
    ),
    "an HTTP setting; Codex refuses it in a stdio server",
)
JSON_HTTP_KEYS = dropping(("url", "headers", "headersHelper", "oauth"), "an HTTP setting; this entry runs zm mcp")

Change = Literal["added", "updated", "unchanged"]
Document = MutableMapping[str, Any]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What applying an entry did: the entry as a whole, and key by key."""

    change: Change
    edits: tuple[Edit, ...] = ()
    kept: tuple[str, ...] = ()
    """The user's own keys inside our entry, kept."""


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
    drop: dict[str, str] = field(default_factory=dict)
    """Keys removed from an entry the user edited, each with why: another transport's settings."""

    def describe(self) -> str:
        return ".".join(self.keys)

    def apply(self, document: Document) -> Outcome:
        parent = document
        for key in self.keys[:-1]:
            if key not in parent:
                parent[key] = tomlkit.table(is_super_table=True) if isinstance(document, tomlkit.TOMLDocument) else {}
            parent = parent[key]
            if not isinstance(parent, MutableMapping):
                raise errors.validation(f"{self.file}: {key} is not a table or object; fix it by hand first")
        name = self.keys[-1]
        current = parent.get(name)
        if current is None:
            parent[name] = self.value
            return Outcome("added")
        if not isinstance(current, MutableMapping):
            parent[name] = self.value
            return Outcome("updated", (Edit("changed", name, "was not a table or object"),))
        merged = merge(current, self.value, drop=self.drop)
        return Outcome("updated" if merged.edits else "unchanged", merged.edits, merged.kept)


@dataclass(frozen=True, slots=True)
class HookEntry:
    """A Claude Code command hook for one event; ours is recognised by ``marker`` in its command. With a
    ``matcher``, our hook sits in a group of its own that carries it (a matcher applies to a whole group)."""

    file: str
    event: str
    command: str
    marker: str
    timeout: int = HOOK_TIMEOUT_S
    matcher: str | None = None

    def describe(self) -> str:
        return f"hooks.{self.event}: {self.marker}"

    def apply(self, document: Document) -> Outcome:
        hooks = document.setdefault("hooks", {})
        if not isinstance(hooks, MutableMapping):
            raise errors.validation(f"{self.file}: hooks is not an object; fix it by hand first")
        groups = hooks.setdefault(self.event, [])
        if not isinstance(groups, list):
            raise errors.validation(f"{self.file}: hooks.{self.event} is not a list; fix it by hand first")
        ours = {"type": "command", "command": self.command, "timeout": self.timeout}
        found = [(g, h) for g in groups if isinstance(g, dict) for h in _ours(g, self.marker)]
        if not found:
            groups.append(self._group(ours))
            return Outcome("added")
        group, hook = found[0]
        command, theirs = _keep_their_env(str(hook.get("command", "")), self.command)
        merged = merge(hook, {**ours, "command": command})
        edits = list(merged.edits)
        for extra_group, extra in found[1:]:
            _remove(extra_group["hooks"], extra)
            edits.append(Edit("removed", "a second copy of this hook"))
        if self.matcher is not None and group.get("matcher") != self.matcher:
            if len(group["hooks"]) == 1:
                edits.append(Edit("added" if "matcher" not in group else "changed", "matcher"))
                group["matcher"] = self.matcher
            else:
                # Another hook shares the group: its matcher is the user's, so ours moves out.
                _remove(group["hooks"], hook)
                groups.append(self._group(hook))
                edits.append(Edit("changed", "matcher", "moved to a group of its own"))
        groups[:] = [g for g in groups if not (isinstance(g, dict) and g.get("hooks") == [])]
        kept = (*(f"command: {name}" for name in theirs), *merged.kept)
        return Outcome("updated" if edits else "unchanged", tuple(edits), kept)

    def _group(self, hook: dict[str, Any]) -> dict[str, Any]:
        return {"matcher": self.matcher, "hooks": [hook]} if self.matcher is not None else {"hooks": [hook]}


def _keep_their_env(current: str, wanted: str) -> tuple[str, list[str]]:
    """``wanted``, led by the ``NAME=value`` settings of ``current`` that it does not set itself: the
    ``ZM_HOME`` a hook was installed with must survive a setup run from a shell without it."""
    try:
        before, after = shlex.split(current), shlex.split(wanted)
    except ValueError:
        return wanted, []
    ours = {word.split("=", 1)[0] for word in _assignments(after)}
    theirs = [word.split("=", 1) for word in _assignments(before) if word.split("=", 1)[0] not in ours]
    if not theirs:
        return wanted, []
    prefix = " ".join(f"{name}={_quote(value)}" for name, value in theirs)
    return f"{prefix} {wanted}", [name for name, _ in theirs]


def _assignments(words: list[str]) -> list[str]:
    leading = itertools.takewhile(lambda word: re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", word, re.S), words)
    return list(leading)


def _remove(items: list[Any], item: Any) -> None:
    """Remove this very object (two copies of a hook are equal, and ``list.remove`` takes the first)."""
    del items[next(i for i, candidate in enumerate(items) if candidate is item)]


def _ours(group: dict[str, Any], marker: str) -> list[dict[str, Any]]:
    hooks = group.get("hooks")
    if not isinstance(hooks, list):
        return []
    return [h for h in hooks if isinstance(h, dict) and marker in str(h.get("command", ""))]


@dataclass(frozen=True, slots=True)
class NotifyEntry:
    """Codex's ``notify``: the one program it runs after every turn (a top-level argv list); ours ends in
    ``hook codex``. Someone else's is never replaced: Codex runs only one, and theirs can call ours."""

    file: str
    argv: tuple[str, ...]

    def describe(self) -> str:
        return "notify: " + " ".join(CODEX_HOOK)

    def apply(self, document: Document) -> Outcome:
        current = plain(document.get("notify"))
        wanted = list(self.argv)
        if current == wanted:
            return Outcome("unchanged")
        if current is not None and not _is_codex_hook(current):
            # Not echoed: the user's own command line may carry anything.
            raise errors.validation(
                f"{self.file}: notify already runs another program and Codex runs only one; call "
                f'`{" ".join(wanted)} "$1"` from it, or remove it and run zm setup codex --capture again'
            )
        document["notify"] = wanted
        return Outcome("added") if current is None else Outcome("updated", (Edit("changed", "notify"),))


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
        ServerEntry(".claude.json", ("mcpServers", SERVER_NAME), _stdio_server(s, type="stdio"), JSON_HTTP_KEYS),
        HookEntry(
            ".claude/settings.json",
            "SessionStart",
            _hook_command(s, "context", "--hook"),
            "context --hook",
            matcher=BRIEFING_MATCHER,
        ),
    ]
    if s.capture:
        command = _hook_command(s, "hook", "claude-code", env={**s.env, **s.model_env})
        entries += [
            HookEntry(".claude/settings.json", event, command, "hook claude-code", CAPTURE_TIMEOUT_S)
            for event in CAPTURE_EVENTS
        ]
    return entries


def _codex(s: Setup) -> list[Entry]:
    entries: list[Entry] = [
        ServerEntry(".codex/config.toml", ("mcp_servers", SERVER_NAME), _stdio_server(s), CODEX_HTTP_KEYS)
    ]
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
    "cursor": lambda s: [
        ServerEntry(".cursor/mcp.json", ("mcpServers", SERVER_NAME), _stdio_server(s), JSON_HTTP_KEYS)
    ],
}
CAPTURE_CLIENTS = ("claude-code", "codex")


@dataclass(frozen=True, slots=True)
class Applied:
    path: Path
    entry: Entry
    outcome: Outcome

    @property
    def change(self) -> Change:
        return self.outcome.change


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


def _quote(value: str) -> str:
    return value if re.fullmatch(r"[\w@%+=:,./-]+", value) else "'" + value.replace("'", "'\\''") + "'"
