from __future__ import annotations

import json

import pytest

from zero_memory.domain.verdicts import MAX_RATIONALE_CHARS, UNJUDGED, HygieneVerdict, PortabilityVerdict, Verdict
from zero_memory.judge.parse import InvalidAnswer, MalformedAnswer, parse_answer
from zero_memory.judge.questions.pair import SCHEMA as HYGIENE_SCHEMA
from zero_memory.judge.questions.portability import SCHEMA as PORTABILITY_SCHEMA


def answer(**fields: object) -> str:
    base: dict[str, object] = {"verdict": "duplicate", "confidence": 0.9, "rationale": "Same fact."}
    base.update(fields)
    return json.dumps({k: v for k, v in base.items() if v is not ...})


@pytest.mark.parametrize("verdict", list(Verdict))
def test_every_verdict_spelled_exactly_is_accepted(verdict: Verdict) -> None:
    assert parse_answer(HygieneVerdict, answer(verdict=str(verdict))).verdict is verdict


@pytest.mark.parametrize("confidence", [0, 0.0, 0.5, 1, 1.0])
def test_confidence_anywhere_in_the_closed_unit_interval_is_accepted(confidence: float) -> None:
    assert parse_answer(HygieneVerdict, answer(confidence=confidence)).confidence == confidence


def test_a_dict_answer_is_held_to_the_same_rules_as_a_json_string() -> None:
    assert (
        parse_answer(HygieneVerdict, {"verdict": "unrelated", "confidence": 0.7, "rationale": "x"}).verdict
        is Verdict.UNRELATED
    )
    with pytest.raises(InvalidAnswer):
        parse_answer(HygieneVerdict, {"verdict": "Unrelated", "confidence": 0.7, "rationale": "x"})


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (answer(verdict="Duplicate"), "verdict case must match exactly"),
        (answer(verdict="merge"), "verdict outside the list"),
        (answer(verdict="unjudged"), "unjudged is never a model's verdict"),
        (answer(confidence=1.01), "confidence above 1"),
        (answer(confidence=-0.1), "confidence below 0"),
        (answer(confidence="0.9"), "confidence as a string"),
        (answer(confidence=True), "confidence as a boolean"),
        (answer(confidence=None), "confidence null"),
        (answer(rationale=...), "rationale missing"),
        (answer(verdict=...), "verdict missing"),
        (answer(rationale=42), "rationale not a string"),
        (answer(extra="x"), "an extra key"),
        ('{"verdict": "duplicate", "confidence": NaN, "rationale": "x"}', "confidence NaN"),
    ],
)
def test_an_answer_that_breaks_the_contract_is_an_invalid_verdict(raw: str, why: str) -> None:
    with pytest.raises(InvalidAnswer):
        parse_answer(HygieneVerdict, raw)


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "duplicate",
        '{"verdict": "duplicate", "confidence": 0.9, "rationale": "cut of',
        '["duplicate", 0.9]',
        "0.9",
        'Sure! {"verdict": "duplicate", "confidence": 0.9, "rationale": "x"}',
        '```json\n{"verdict": "duplicate", "confidence": 0.9, "rationale": "x"}\n```',
    ],
)
def test_an_answer_that_is_not_a_json_object_is_malformed(raw: str) -> None:
    with pytest.raises(MalformedAnswer):
        parse_answer(HygieneVerdict, raw)


def test_surrounding_whitespace_is_not_malformed() -> None:
    assert parse_answer(HygieneVerdict, "\n  " + answer() + "\n").verdict is Verdict.DUPLICATE


def test_a_very_long_rationale_is_cut_not_rejected() -> None:
    verdict = parse_answer(HygieneVerdict, answer(rationale="why " * 2_000))
    assert len(verdict.rationale) == MAX_RATIONALE_CHARS
    assert verdict.rationale.endswith("…")


def test_an_invalid_answer_is_described_without_echoing_long_inputs() -> None:
    with pytest.raises(InvalidAnswer) as caught:
        parse_answer(HygieneVerdict, answer(verdict="x" * 500))
    assert "verdict" in str(caught.value)
    assert "x" * 100 not in str(caught.value)


def test_portability_answers_need_a_real_boolean() -> None:
    good = '{"portable": true, "confidence": 0.8, "rationale": "A git fact."}'
    assert parse_answer(PortabilityVerdict, good).portable is True
    for bad in (
        '{"portable": "true", "confidence": 0.8, "rationale": "x"}',
        '{"portable": 1, "confidence": 0.8, "rationale": "x"}',
    ):
        with pytest.raises(InvalidAnswer):
            parse_answer(PortabilityVerdict, bad)


def test_a_hygiene_answer_is_not_a_portability_answer() -> None:
    with pytest.raises(InvalidAnswer):
        parse_answer(PortabilityVerdict, answer())


def test_the_hygiene_schema_is_closed_self_contained_and_lists_the_six_verdicts() -> None:
    schema = HYGIENE_SCHEMA
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert set(schema["required"]) == {"verdict", "confidence", "rationale"} == set(schema["properties"])
    assert schema["properties"]["verdict"]["enum"] == [str(v) for v in Verdict]
    assert schema["properties"]["confidence"]["type"] == "number"
    assert "$ref" not in json.dumps(schema) and "$defs" not in schema and "title" not in json.dumps(schema)


def test_the_schema_asks_for_the_rationale_before_the_verdict() -> None:
    assert next(iter(HYGIENE_SCHEMA["properties"])) == "rationale"
    assert list(PORTABILITY_SCHEMA["properties"]) == ["rationale", "portable", "confidence"]


def test_unjudged_is_a_queue_verdict_not_a_model_verdict() -> None:
    assert UNJUDGED == "unjudged"
    assert UNJUDGED not in {str(v) for v in Verdict}


def test_supersede_verdicts_know_they_are_supersedes() -> None:
    assert {v for v in Verdict if v.is_supersede} == {Verdict.A_SUPERSEDES_B, Verdict.B_SUPERSEDES_A}
