"""Reading a choice from what the edges send; a bulk call's choice per row (docs/spec/hygiene.md §4, tools.md)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from zero_memory import errors
from zero_memory.conflicts.bulk import item_choice, policy_choice
from zero_memory.conflicts.choice import Accept, Choice, Forget, KeepBoth, Merge, Retire, Winner, choice_of
from zero_memory.conflicts.models import BulkItem, Policy
from zero_memory.domain.memory import AuthorKind, InvalidationReason, Kind, Memory, Rank, Status

EXACTLY_ONE = "Value error, pass exactly one of keep_both, winner, forget, merge, retire or accept"
T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)

# Each field unset, set, or set to the value an edge sends for "not this one" (false for a flag).
VALUES: dict[str, tuple[Any, ...]] = {
    "keep_both": (None, True, False),
    "winner": (None, "mem_a"),
    "forget": (None, "mem_b"),
    "merge": (None, "composed text"),
    "retire": (None, True, False),
    "accept": (None, True, False),
}
ONLY: dict[str, Choice] = {
    "keep_both": KeepBoth(),
    "winner": Winner("mem_a"),
    "forget": Forget("mem_b"),
    "merge": Merge("composed text"),
    "retire": Retire(),
    "accept": Accept(),
}


def test_every_combination_of_the_six_fields_reads_as_its_one_choice_or_is_refused() -> None:
    wrong = []
    combos = list(itertools.product(*VALUES.values()))
    assert len(combos) == 3 * 2 * 2 * 2 * 3 * 3
    for combo in combos:
        fields = dict(zip(VALUES, combo, strict=True))
        chosen = [name for name, value in fields.items() if value not in (None, False)]
        expected: Choice | str = ONLY[chosen[0]] if len(chosen) == 1 else EXACTLY_ONE
        try:
            got: Choice | str = choice_of(**fields)
        except ValidationError as error:
            (problem,) = error.errors()
            got = problem["msg"] if problem["loc"] == () else f"{problem['loc']}: {problem['msg']}"
        if got != expected:
            wrong.append(f"{fields}: expected {expected}, got {got}")
    assert not wrong, "\n".join(wrong)


def test_an_empty_id_or_text_is_still_a_choice_and_is_refused_later_with_its_reason() -> None:
    """The edges always sent "" through as a choice; the plan (or the merge check) says what is wrong with it."""
    assert choice_of(winner="") == Winner("")
    assert choice_of(merge="") == Merge("")


def test_an_id_over_100_characters_is_refused_as_a_field() -> None:
    for name in ("winner", "forget"):
        with pytest.raises(ValidationError) as raised:
            choice_of(**{name: "m" * 101})
        (problem,) = raised.value.errors()
        assert (problem["loc"], problem["msg"]) == ((name,), "String should have at most 100 characters")


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        ({}, KeepBoth()),
        ({"retire": False}, KeepBoth()),
        ({"retire": True}, Retire()),
        ({"winner": "mem_a"}, Winner("mem_a")),
        ({"winner": "mem_a", "retire": False}, Winner("mem_a")),
        ({"winner": "mem_a", "retire": True}, "validation_failed: pass winner or retire, not both"),
    ],
)
def test_an_explicit_bulk_item_is_its_winner_retire_or_keep_both(item: dict[str, Any], expected: Choice | str) -> None:
    try:
        got: Choice | str = item_choice(BulkItem(dispute_id="dsp_1", **item))
    except errors.ZMError as error:
        got = str(error)
    assert got == expected


def side(mid: str, days: int, live: bool = True) -> Memory:
    at = T0 + timedelta(days=days)
    return Memory(
        id=mid,
        owner="alice",
        scope="user.alice",
        kind=Kind.FACT,
        content=mid,
        author_kind=AuthorKind.AGENT,
        agent_name="test",
        rank=Rank.AGENT,
        source={},
        created_at=at,
        updated_at=at,
        status=Status.LIVE if live else Status.INVALIDATED,
        invalidated_reason=None if live else InvalidationReason.FORGOTTEN,
    )


def test_a_policy_keeps_the_newer_or_older_side_and_skips_a_row_whose_kept_side_is_gone() -> None:
    wrong = []
    for name, a_newer, a_live, b_live in itertools.product(
        ("newest_wins", "oldest_wins", "keep_both"), (True, False), (True, False), (True, False)
    ):
        a, b = side("mem_a", 2 if a_newer else 1, a_live), side("mem_b", 1 if a_newer else 2, b_live)
        newer, older = (a, b) if a_newer else (b, a)
        kept = {"newest_wins": newer, "oldest_wins": older}.get(name)
        expected = KeepBoth() if kept is None else Winner(kept.id) if kept.live else None
        got = policy_choice(Policy(name=name), a, b)  # type: ignore[arg-type]
        if got != expected:
            wrong.append(f"{name} A newer={a_newer} live={a_live} B live={b_live}: expected {expected}, got {got}")
    assert not wrong, "\n".join(wrong)


def test_a_policy_breaks_a_tie_in_age_by_id() -> None:
    a, b = side("mem_a", 1), side("mem_b", 1)
    assert policy_choice(Policy(name="newest_wins"), a, b) == Winner("mem_b")
    assert policy_choice(Policy(name="oldest_wins"), a, b) == Winner("mem_a")
