"""The shared SQL as PostgreSQL gets it: marks as %s, each IN list one array parameter."""

from __future__ import annotations

import pytest

from zero_memory.store.postgres.params import statement


@pytest.mark.parametrize(
    ("sql", "params", "expected_sql", "expected_params"),
    [
        ("SELECT 1", (), "SELECT 1", []),
        ("SELECT * FROM t WHERE a = ? AND b = ?", (1, 2), "SELECT * FROM t WHERE a = %s AND b = %s", [1, 2]),
        ("SELECT * FROM t WHERE id IN (?, ?, ?)", ("x", "y", "z"), "SELECT * FROM t WHERE id = ANY(%s)", [list("xyz")]),
        ("SELECT * FROM t WHERE id IN (?)", ("x",), "SELECT * FROM t WHERE id = ANY(%s)", [["x"]]),
        (
            "SELECT * FROM t WHERE a = ? AND id NOT IN (?, ?) AND b = ?",
            (1, "x", "y", 2),
            "SELECT * FROM t WHERE a = %s AND id <> ALL(%s) AND b = %s",
            [1, ["x", "y"], 2],
        ),
        (
            "SELECT * FROM d WHERE s = 'p' AND (a IN (?, ?) OR b in (?,?))",
            ("x", "y", "x", "y"),
            "SELECT * FROM d WHERE s = 'p' AND (a = ANY(%s) OR b = ANY(%s))",
            [["x", "y"], ["x", "y"]],
        ),
        (
            "DELETE FROM t WHERE id IN (SELECT id FROM m WHERE owner = ?)",
            ("u",),
            "DELETE FROM t WHERE id IN (SELECT id FROM m WHERE owner = %s)",
            ["u"],
        ),
        ("SELECT * FROM t WHERE join_in IN (?, ?)", (1, 2), "SELECT * FROM t WHERE join_in = ANY(%s)", [[1, 2]]),
    ],
)
def test_each_in_list_becomes_one_array_parameter(
    sql: str, params: tuple[object, ...], expected_sql: str, expected_params: list[object]
) -> None:
    shared = statement(sql)
    assert shared.sql == expected_sql
    assert shared.params(params) == expected_params


def test_lists_of_any_length_share_one_statement_text() -> None:
    texts = {statement(f"SELECT * FROM t WHERE id IN ({', '.join('?' * n)}) AND a = ?").sql for n in range(1, 40)}
    assert texts == {"SELECT * FROM t WHERE id = ANY(%s) AND a = %s"}


def test_the_binary_spelling_sends_only_the_arrays_in_binary() -> None:
    shared = statement("SELECT * FROM d WHERE s = ? AND (a IN (?, ?) OR b NOT IN (?,?))")
    assert shared.sql == "SELECT * FROM d WHERE s = %s AND (a = ANY(%s) OR b <> ALL(%s))"
    assert shared.binary_sql == "SELECT * FROM d WHERE s = %s AND (a = ANY(%b) OR b <> ALL(%b))"
    assert statement("SELECT 1").binary_sql == "SELECT 1"
