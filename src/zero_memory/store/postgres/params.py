"""The shared SQL in psycopg's spelling, with each ``IN (?, …)`` list sent as one array parameter.

The shared queries (``store/queries/``) write ``?`` placeholders and spell a
list of values as ``IN (?, ?, …)``, one mark a value, as SQLite wants. Sent
as it is, every length of list is another statement text to PostgreSQL:
parsed and planned anew each time, and never the same text often enough for
psycopg to prepare it (a recall's open-disputes query, 160 marks, took 2 ms
that way). Here each such list becomes ``= ANY(%s)`` (``<> ALL(%s)`` for ``NOT
IN``) with the list's values as one array: one text, one plan, whatever the
length. ``x IN (a, b)`` and ``x = ANY(ARRAY[a, b])`` mean the same in SQL, NULLs
included. No shared query has a literal ``?`` or ``%``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

# A list of marks after IN or NOT IN, or a lone mark.
_MARKS = re.compile(r"\b(NOT\s+)?IN\s*\(\s*\?(?:\s*,\s*\?)*\s*\)|\?", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Statement:
    """A shared query in psycopg's spelling, and which of its parameters each array gathers."""

    sql: str
    # (first parameter, how many): the run of the query's parameters that one array takes.
    lists: tuple[tuple[int, int], ...] = ()
    # ``sql`` with each array sent in binary (``%b``): psycopg dumps a list of strings as text a value at a
    # time, checking each for characters to quote (130 µs for 120 memory ids; 26 µs in binary). For a
    # statement whose lists are known to hold values of one type, none of them None.
    binary_sql: str = ""

    def params(self, params: Sequence[Any]) -> list[Any]:
        """The query's parameters as psycopg takes them: each list's run of values as one list."""
        values = list(params)
        if not self.lists:
            return values
        gathered: list[Any] = []
        at = 0
        for first, count in self.lists:
            gathered.extend(values[at:first])
            gathered.append(values[first : first + count])
            at = first + count
        gathered.extend(values[at:])
        return gathered


@lru_cache(maxsize=2048)
def statement(sql: str) -> Statement:
    """``sql``'s marks as ``%s``, each ``IN (?, …)`` list one array parameter."""
    parts: list[str] = []
    binary: list[str] = []
    lists: list[tuple[int, int]] = []
    at = 0
    index = 0
    for match in _MARKS.finditer(sql):
        parts.append(sql[at : match.start()])
        binary.append(sql[at : match.start()])
        at = match.end()
        text = match.group(0)
        if text == "?":
            parts.append("%s")
            binary.append("%s")
            index += 1
            continue
        count = text.count("?")
        parts.append("<> ALL(%s)" if match.group(1) else "= ANY(%s)")
        binary.append("<> ALL(%b)" if match.group(1) else "= ANY(%b)")
        lists.append((index, count))
        index += count
    parts.append(sql[at:])
    binary.append(sql[at:])
    return Statement("".join(parts), tuple(lists), "".join(binary))
