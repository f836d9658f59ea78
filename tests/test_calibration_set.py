"""The labelled pair set behind docs/calibration.md is well-formed (no model needed)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

PAIRS = Path(__file__).resolve().parents[1] / "evals" / "embedding_pairs.jsonl"
LABELS = {
    "exact",
    "duplicate",
    "paraphrase",
    "translation",
    "update",
    "contradiction",
    "complementary",
    "unrelated_same_domain",
    "unrelated",
}
MIN_PER_LABEL = 25
MIN_TOTAL = 240


@pytest.fixture(scope="module")
def rows() -> list[dict[str, str]]:
    out = []
    for lineno, line in enumerate(PAIRS.read_text(encoding="utf-8").splitlines(), 1):
        assert line.strip(), f"blank line {lineno}"
        obj = json.loads(line)
        assert isinstance(obj, dict), f"line {lineno} is not an object"
        out.append(obj)
    return out


def test_every_row_has_exactly_a_b_label(rows: list[dict[str, str]]) -> None:
    for i, row in enumerate(rows, 1):
        assert set(row) == {"a", "b", "label"}, f"line {i}: keys {sorted(row)}"
        for key in ("a", "b", "label"):
            assert isinstance(row[key], str), f"line {i}: {key} is not a string"
        assert row["a"].strip() and row["b"].strip(), f"line {i}: empty text"
        assert row["a"] == row["a"].strip() and row["b"] == row["b"].strip(), f"line {i}: padded text"


def test_labels_are_valid(rows: list[dict[str, str]]) -> None:
    unknown = {row["label"] for row in rows} - LABELS
    assert not unknown, f"unknown labels: {unknown}"


def test_enough_pairs_per_label(rows: list[dict[str, str]]) -> None:
    counts = Counter(row["label"] for row in rows)
    assert len(rows) >= MIN_TOTAL
    short = {label: counts.get(label, 0) for label in LABELS if counts.get(label, 0) < MIN_PER_LABEL}
    assert not short, f"labels with fewer than {MIN_PER_LABEL} pairs: {short}"


def test_no_duplicate_pairs(rows: list[dict[str, str]]) -> None:
    seen: dict[frozenset[str] | tuple[str, str], int] = {}
    for i, row in enumerate(rows, 1):
        key = (row["a"], row["b"]) if row["a"] == row["b"] else frozenset((row["a"], row["b"]))
        assert key not in seen, f"line {i} repeats line {seen[key]} (in either order)"
        seen[key] = i


def test_exact_pairs_are_identical_and_others_differ(rows: list[dict[str, str]]) -> None:
    for i, row in enumerate(rows, 1):
        if row["label"] == "exact":
            assert row["a"] == row["b"], f"line {i}: exact pair with different texts"
        else:
            assert row["a"] != row["b"], f"line {i}: {row['label']} pair with identical texts"


def test_duplicates_differ_only_slightly(rows: list[dict[str, str]]) -> None:
    """A `duplicate` is near-identical wording: punctuation, casing or a word or two."""
    for i, row in enumerate(rows, 1):
        if row["label"] != "duplicate":
            continue
        a, b = row["a"].lower().split(), row["b"].lower().split()
        assert abs(len(a) - len(b)) <= 3, f"line {i}: duplicate lengths differ too much"
