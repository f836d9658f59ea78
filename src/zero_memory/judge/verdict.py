"""The judge's answers, validated at the edge.

A provider's answer becomes a ``HygieneVerdict`` or a ``PortabilityVerdict``
the moment it arrives, or it is rejected: nothing half-parsed travels inward.
Validation is strict on purpose. A confidence given as the string ``"0.9"``,
a verdict spelled ``"Duplicate"``, an extra key or a missing one are all
rejections, because a model that bends the output contract is not a model
whose verdict should retire a memory. The one leniency: a rationale longer
than ``MAX_RATIONALE_CHARS`` is cut, not rejected — its length says nothing
about whether the verdict is right, and the audit log caps payloads anyway.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any, Final, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

MAX_RATIONALE_CHARS: Final = 2_000

HYGIENE_SCHEMA_NAME: Final = "hygiene_verdict"
PORTABILITY_SCHEMA_NAME: Final = "portability_verdict"
LOOP_CLOSURE_SCHEMA_NAME: Final = "loop_closure_verdict"


class Verdict(StrEnum):
    """How two memories relate; docs/spec/hygiene.md §2 gives the meaning of each."""

    DUPLICATE = "duplicate"
    A_SUPERSEDES_B = "a_supersedes_b"
    B_SUPERSEDES_A = "b_supersedes_a"
    CONTRADICTION = "contradiction"
    COMPLEMENTARY = "complementary"
    UNRELATED = "unrelated"

    @property
    def is_supersede(self) -> bool:
        return self in (Verdict.A_SUPERSEDES_B, Verdict.B_SUPERSEDES_A)


UNJUDGED: Final = "unjudged"
"""The queue's verdict for a pair parked in offer mode. No model ever produces it."""


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    rationale: str = Field(description="One short paragraph: why this verdict.")

    @field_validator("rationale", mode="after")
    @classmethod
    def _bounded(cls, value: str) -> str:
        value = value.strip()
        if len(value) > MAX_RATIONALE_CHARS:
            return value[: MAX_RATIONALE_CHARS - 1] + "…"
        return value


# Field order is the order a model writes the answer in (structured output
# follows the schema): the rationale first, so the verdict comes after the
# reasoning instead of being rationalised after the fact.
class HygieneVerdict(_Answer):
    verdict: Verdict = Field(description="Exactly one of the six verdicts.")
    confidence: float = Field(ge=0.0, le=1.0, description="Probability that the verdict is right, 0 to 1.")


class PortabilityVerdict(_Answer):
    portable: bool = Field(description="True only if the note holds outside the project it was written in.")
    confidence: float = Field(ge=0.0, le=1.0, description="Probability that the answer is right, 0 to 1.")


class LoopClosureVerdict(_Answer):
    closed: bool = Field(description="True only if the later note shows the task done or the question answered.")
    confidence: float = Field(ge=0.0, le=1.0, description="Probability that the answer is right, 0 to 1.")


_M = TypeVar("_M", bound=BaseModel)


class InvalidAnswer(ValueError):
    """The answer is JSON but breaks the contract (kind ``invalid_verdict``)."""


class MalformedAnswer(ValueError):
    """The answer is not a JSON object at all (kind ``malformed``)."""


def parse_hygiene(answer: str | dict[str, Any]) -> HygieneVerdict:
    """A validated verdict from a provider's raw answer, or ``MalformedAnswer``/``InvalidAnswer``."""
    return parse_answer(HygieneVerdict, answer)


def parse_portability(answer: str | dict[str, Any]) -> PortabilityVerdict:
    return parse_answer(PortabilityVerdict, answer)


def parse_loop_closure(answer: str | dict[str, Any]) -> LoopClosureVerdict:
    return parse_answer(LoopClosureVerdict, answer)


def parse_answer(model: type[_M], answer: str | dict[str, Any]) -> _M:
    """``answer`` validated as ``model`` under the strict rules above, or ``MalformedAnswer``/``InvalidAnswer``."""
    # Validating JSON text (not Python objects) keeps one set of strict rules
    # for both transports: enum values are matched exactly, numbers stay numbers.
    if isinstance(answer, dict):
        text = json.dumps(answer)
    elif isinstance(answer, str):
        text = answer.strip()
        try:
            decoded = json.loads(text)
        except json.JSONDecodeError as exc:
            raise MalformedAnswer(f"the answer is not JSON ({exc.msg}, char {exc.pos})") from None
        if not isinstance(decoded, dict):
            raise MalformedAnswer(f"the answer is JSON but not an object ({type(decoded).__name__})")
    else:
        raise MalformedAnswer(f"the answer is a {type(answer).__name__}, not a JSON object")
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        raise InvalidAnswer(_describe(exc)) from None


def _describe(exc: ValidationError) -> str:
    """The validation errors, one clause each, without echoing long inputs."""
    clauses = []
    for error in exc.errors(include_url=False)[:5]:
        where = ".".join(str(part) for part in error["loc"]) or "answer"
        got = repr(error.get("input"))
        clauses.append(f"{where}: {error['msg']} (got {got[:40]})")
    return "; ".join(clauses)


def response_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema sent to providers: self-contained, no titles, closed objects.

    Derived from the pydantic model so the two cannot drift; ``$ref``s are
    inlined because several OpenAI-compatible servers turn the schema into a
    grammar and do not follow references.
    """
    schema = model.model_json_schema()
    definitions = schema.pop("$defs", {})

    def clean(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                target = definitions[node["$ref"].rsplit("/", 1)[-1]]
                return clean({**target, **{k: v for k, v in node.items() if k != "$ref"}})
            return {key: clean(value) for key, value in node.items() if key != "title"}
        if isinstance(node, list):
            return [clean(item) for item in node]
        return node

    cleaned: dict[str, Any] = clean(schema)
    return cleaned


HYGIENE_SCHEMA: Final = response_schema(HygieneVerdict)
PORTABILITY_SCHEMA: Final = response_schema(PortabilityVerdict)
LOOP_CLOSURE_SCHEMA: Final = response_schema(LoopClosureVerdict)
