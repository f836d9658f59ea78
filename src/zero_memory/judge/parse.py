"""A provider's raw answer validated into the question's answer type, or rejected.

An answer becomes its pydantic model (``zero_memory.domain.verdicts``) the
moment it arrives, or a failure: nothing half-parsed travels inward. The
same strict rules hold for both transports, and the schema sent to a
provider is derived from the same model, so the two cannot drift.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

_M = TypeVar("_M", bound=BaseModel)


class InvalidAnswer(ValueError):
    """The answer is JSON but breaks the contract (kind ``invalid_verdict``)."""


class MalformedAnswer(ValueError):
    """The answer is not a JSON object at all (kind ``malformed``)."""


def parse_answer(model: type[_M], answer: str | dict[str, Any]) -> _M:
    """``answer`` validated as ``model`` under the strict rules, or ``MalformedAnswer``/``InvalidAnswer``."""
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
