"""Reading query strings and posted forms into the typed arguments of service calls."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zero_memory import errors
from zero_memory.conflicts.choice import Choice, choice_of

CHOICE_TEXT_FIELDS = ("winner", "forget", "merge")
CHOICE_FLAGS = ("keep_both", "retire", "accept")


def text(params: Mapping[str, Any], name: str, default: str = "") -> str:
    value = params.get(name)
    return value if isinstance(value, str) else default


def optional(params: Mapping[str, Any], name: str) -> str | None:
    """A field's text, or None when it is absent or empty (an "any" choice in a filter)."""
    return text(params, name).strip() or None


def integer(params: Mapping[str, Any], name: str, default: int) -> int:
    raw = text(params, name).strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise errors.validation(f"{name}: expected a whole number, got {raw[:20]!r}") from None


def flag(params: Mapping[str, Any], name: str) -> bool:
    return text(params, name) not in ("", "0", "false", "off")


def choice(form: Mapping[str, Any]) -> Choice:
    """The settlement a queue form posts: the pressed button's name and value, or the merge text.

    Buttons carry the choice themselves (``winner=<memory id>``, ``keep_both=1``),
    so the form reads the same with or without JavaScript.
    """
    fields: dict[str, Any] = {name: form[name] for name in CHOICE_TEXT_FIELDS if isinstance(form.get(name), str)}
    fields.update({name: True for name in CHOICE_FLAGS if flag(form, name)})
    if "merge" in fields:
        fields["merge"] = fields["merge"].replace("\r\n", "\n").strip()
    return choice_of(**fields)
