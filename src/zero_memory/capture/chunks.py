"""A chunk's identity and how long text is cut into chunks: pure functions."""

from __future__ import annotations

import hashlib


def chunk_hash(text: str) -> str:
    """The SHA-256 of the chunk's UTF-8 bytes, in hex: what a client passes as ``chunk_hash``."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def split(text: str, max_chars: int) -> list[str]:
    """``text`` in pieces of at most ``max_chars``, cut after a line end where there is one.

    Joined, the pieces give ``text`` back, less any piece that held only
    whitespace (dropped: there is nothing in it to extract). A single line
    longer than ``max_chars`` is cut inside the line.
    """
    if max_chars <= 0:
        raise ValueError("max_chars must be positive")
    pieces: list[str] = []
    start = 0
    while start < len(text):
        end = min(start + max_chars, len(text))
        if end < len(text):
            newline = text.rfind("\n", start, end)
            if newline >= start:
                end = newline + 1
        pieces.append(text[start:end])
        start = end
    return [piece for piece in pieces if piece.strip()]
