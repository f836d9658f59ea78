"""Merging our entry into one the user may have edited, as a pure step that says what it did.

A key we write is ours: it is added when missing and set in place when its
value differs. A key we do not write is the user's (Codex's
``startup_timeout_sec``, an ``env`` variable of their own) and is kept as it
is; inside a table both have (``env``), the same holds key by key. The only
keys removed are those named in ``drop``: settings of another transport that
the client refuses beside ours (Codex rejects ``url`` in a stdio server).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, Literal

Verb = Literal["added", "changed", "removed"]


@dataclass(frozen=True, slots=True)
class Edit:
    """One key that merging added, changed or removed; ``key`` is its dotted path inside the entry."""

    verb: Verb
    key: str
    why: str = ""

    def line(self) -> str:
        return f"{self.verb}: {self.key}" + (f" ({self.why})" if self.why else "")


@dataclass(frozen=True, slots=True)
class Merged:
    edits: tuple[Edit, ...]
    kept: tuple[str, ...]
    """The user's own keys, left as they were."""


def merge(
    current: MutableMapping[str, Any],
    wanted: Mapping[str, Any],
    *,
    drop: Mapping[str, str] | None = None,
    prefix: str = "",
) -> Merged:
    """Put ``wanted`` into ``current`` in place; ``drop`` maps a key to remove to the reason it goes."""
    edits: list[Edit] = []
    kept: list[str] = []
    for key, value in wanted.items():
        path = prefix + key
        if key not in current:
            current[key] = value
            edits.append(Edit("added", path))
            continue
        present = current[key]
        if isinstance(value, Mapping) and isinstance(present, MutableMapping):
            inner = merge(present, value, prefix=path + ".")
            edits += inner.edits
            kept += inner.kept
        elif plain(present) != value:
            current[key] = value
            edits.append(Edit("changed", path))
    removed = drop or {}
    for key in [k for k in current if k in removed]:
        del current[key]
        edits.append(Edit("removed", prefix + key, removed[key]))
    kept += [prefix + key for key in current if key not in wanted]
    return Merged(tuple(edits), tuple(kept))


def plain(value: Any) -> Any:
    """A parsed TOML value as the plain Python value it holds (JSON values are plain already)."""
    unwrap = getattr(value, "unwrap", None)
    return unwrap() if callable(unwrap) else value


def dropping(keys: Iterable[str], why: str) -> dict[str, str]:
    return dict.fromkeys(keys, why)
