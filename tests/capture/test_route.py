"""The capture stream's pure decisions, as tables."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from zero_memory.capture import route
from zero_memory.capture.chunks import chunk_hash, split
from zero_memory.domain.records import ChunkStatus
from zero_memory.domain.verdicts import ExtractedStatement
from zero_memory.settings import CaptureConfig

NOW = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)
PROJECT = "proj.alice.api"


@pytest.mark.parametrize(
    ("kind", "hint", "scope"),
    [
        ("preference", "personal", "personal"),
        ("preference", "project", PROJECT),
        ("fact", "personal", PROJECT),
        ("gotcha", "personal", PROJECT),
        ("decision", "personal", PROJECT),
        ("convention", "project", PROJECT),
        ("task", "project", PROJECT),
    ],
)
def test_only_a_personal_preference_leaves_the_project(kind: str, hint: str, scope: str) -> None:
    said = ExtractedStatement.model_validate_json(json.dumps({"content": "x", "kind": kind, "scope_hint": hint}))
    assert route.target(said, PROJECT) == scope


@pytest.mark.parametrize(
    ("attempts", "status", "wait_s"),
    [
        (1, ChunkStatus.PENDING, 60),
        (2, ChunkStatus.PENDING, 120),
        (3, ChunkStatus.PENDING, 240),
        (4, ChunkStatus.PENDING, 480),
        (5, ChunkStatus.FAILED, 0),
        (9, ChunkStatus.FAILED, 0),
    ],
)
def test_a_failed_attempt_waits_twice_as_long_each_time_then_gives_up(
    attempts: int, status: ChunkStatus, wait_s: int
) -> None:
    plan = route.after_failure(attempts, CaptureConfig(max_attempts=5, retry_after_s=60), NOW)
    assert plan.status is status
    assert plan.next_attempt_at == NOW + timedelta(seconds=wait_s)


@pytest.mark.parametrize(
    ("now", "midnight"),
    [
        (datetime(2026, 3, 2, 9, 30, tzinfo=UTC), datetime(2026, 3, 3, tzinfo=UTC)),
        (datetime(2026, 3, 2, 0, 0, tzinfo=UTC), datetime(2026, 3, 3, tzinfo=UTC)),
        (datetime(2026, 12, 31, 23, 59, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC)),
    ],
)
def test_the_allowance_renews_at_the_next_utc_midnight(now: datetime, midnight: datetime) -> None:
    assert route.next_day(now) == midnight


def test_a_long_text_is_cut_after_line_ends_and_nothing_but_blank_pieces_is_lost() -> None:
    lines = [f"user: line {i} " + "x" * (i % 7) + "\n" for i in range(200)]
    text = "".join(lines)
    pieces = split(text, 300)
    assert "".join(pieces) == text
    assert all(len(piece) <= 300 and piece.endswith("\n") for piece in pieces)


def test_a_line_longer_than_a_chunk_is_cut_inside_it() -> None:
    pieces = split("a" * 250 + "\nb\n", 100)
    assert pieces == ["a" * 100, "a" * 100, "a" * 50 + "\nb\n"]


def test_whitespace_only_pieces_are_dropped() -> None:
    assert split("   \n\n\t\n", 4) == []
    assert split("", 10) == []


def test_the_chunk_hash_is_the_sha256_of_the_utf8_bytes() -> None:
    # Known answer: `printf 'ü' | sha256sum` (two UTF-8 bytes, not the Latin-1 one).
    assert chunk_hash("ü") == "607474ca475a9724d7360aba71a56d5df77e61350e3f724cfa1f46e857e2d85f"
