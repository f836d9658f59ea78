"""The one translation of a pydantic refusal, shared by every edge (MCP, CLI, dashboard, imports)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.memory.imports import import_path
from zero_memory.memory.validation import invalid_input

TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


class Inner(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    dst: str


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    limit: int
    links: list[Inner] = []


def refusal(data: dict[str, object]) -> str:
    with pytest.raises(ValidationError) as caught:
        Args.model_validate(data)
    return str(invalid_input(caught.value))


def test_each_problem_is_named_by_where_it_is_and_never_by_its_value() -> None:
    text = refusal({"limit": "7", "links": [{"dst": 3}]})
    assert text.startswith("validation_failed: ")
    assert "limit: " in text and "links[0].dst: " in text
    assert "'7'" not in text


def test_a_name_that_looks_like_a_credential_is_not_repeated() -> None:
    text = refusal({"limit": 1, TOKEN: "x"})
    assert TOKEN not in text
    assert "<unnamed>: unknown argument" in text


def test_a_missing_field_says_required() -> None:
    assert refusal({}) == "validation_failed: limit: required"


def test_at_most_five_problems_are_listed() -> None:
    text = refusal({"limit": "x", **{f"extra_{i}": i for i in range(9)}})
    assert text.count("unknown argument") == 4
    assert text.endswith("and 5 more")


def test_an_import_record_of_the_wrong_shape_is_refused_without_its_value(app: App, tmp_path: Path) -> None:
    notes = tmp_path / "notes.jsonl"
    notes.write_text(f'{{"content": ["{TOKEN}"]}}\n{{"content": "ok", "kind": "{TOKEN}"}}\nnot json\n')
    report = import_path(app, Caller("alice"), notes, scope="personal")
    assert report.imported == 0
    errors = [failure["error"] for failure in report.failed]
    assert [error.split(": ")[0] for error in errors] == ["validation_failed"] * 3
    assert errors[0].startswith("validation_failed: content: ")
    assert errors[1].startswith("validation_failed: kind: ")
    assert all(TOKEN not in error for error in errors)
