"""Checks every text a caller hands in, before anything is embedded or stored."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from pydantic import ValidationError

from zero_memory import errors
from zero_memory.domain.memory import MAX_CONTENT_CHARS
from zero_memory.memory import guard

MAX_REPORTED_ERRORS = 5
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def check_text(field: str, text: str, *, max_chars: int = MAX_CONTENT_CHARS, required: bool = True) -> str:
    if required and not text.strip():
        raise errors.validation(f"{field}: must not be empty")
    if len(text) > max_chars:
        raise errors.validation(f"{field}: {len(text)} characters is over the limit of {max_chars}")
    if "\x00" in text:
        raise errors.validation(f"{field}: contains a NUL character")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise errors.validation(f"{field}: is not valid Unicode (a lone surrogate)") from None
    return text


def check_fields(fields: Mapping[str, str | None]) -> None:
    """Well-formed text and no credentials, in every field; raises on the first problem."""
    for name, value in fields.items():
        if value is not None:
            check_text(name, value, required=False, max_chars=max(MAX_CONTENT_CHARS, len(value)))
    guard.check_fields(fields)


def field_name(part: str | int) -> str:
    """A location part as it may be shown: an index, or a name that cannot smuggle a secret back out."""
    if isinstance(part, int):
        return f"[{part}]"
    if _PLAIN_NAME.fullmatch(part) and guard.find_secret(part) is None:
        return part
    return "<unnamed>"


def location(loc: Sequence[str | int]) -> str:
    text = ""
    for part in loc:
        shown = field_name(part)
        text += shown if shown.startswith("[") or not text else f".{shown}"
    return text or "arguments"


def invalid_input(error: ValidationError) -> errors.ZMError:
    """A pydantic refusal as ``validation_failed: <field>: <what is wrong>``, for each problem.

    The one translation every edge uses (MCP tools, the CLI, the dashboard, imports): it never shows
    the value, and a field name that could smuggle a secret back out is shown as ``<unnamed>``.
    """
    problems = []
    for item in error.errors(include_input=False, include_url=False)[:MAX_REPORTED_ERRORS]:
        where = location(item["loc"])
        if item["type"] == "extra_forbidden":
            problems.append(f"{where}: unknown argument")
        elif item["type"] == "missing":
            problems.append(f"{where}: required")
        else:
            problems.append(f"{where}: {item['msg']}")
    more = error.error_count() - MAX_REPORTED_ERRORS
    if more > 0:
        problems.append(f"and {more} more")
    return errors.validation("; ".join(problems))
