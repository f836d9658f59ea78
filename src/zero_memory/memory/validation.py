"""Checks every text a caller hands in, before anything is embedded or stored."""

from __future__ import annotations

from collections.abc import Mapping

from zero_memory import errors
from zero_memory.domain.memory import MAX_CONTENT_CHARS
from zero_memory.memory import guard


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
