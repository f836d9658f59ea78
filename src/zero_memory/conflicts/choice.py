"""How a review-queue row is settled: one of six small types, and the one reading of what the edges send.

The MCP tool, the dashboard form and ``zm conflicts resolve`` all offer the
same optional fields (docs/spec/tools.md ``resolve_conflict``, plus ``accept``:
carry out the row's proposal), of which exactly one is set. ``choice_of``
reads them into the union, so the rule "exactly one" and its wording live
here once; everything behind the edges matches on the union's type and never
re-checks which field was set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from pydantic import BaseModel, ConfigDict, Field, model_validator

MAX_ID = 100


@dataclass(frozen=True, slots=True)
class KeepBoth:
    """Both memories stay; on a single-subject row, the memory is upheld."""


@dataclass(frozen=True, slots=True)
class Winner:
    """This memory stays; the pair's other side is invalidated, superseded by it."""

    memory_id: str


@dataclass(frozen=True, slots=True)
class Forget:
    """This side of the pair is forgotten; the other stays."""

    memory_id: str


@dataclass(frozen=True, slots=True)
class Merge:
    """A new memory with this text supersedes both sides of the pair."""

    text: str


@dataclass(frozen=True, slots=True)
class Retire:
    """A single-subject row's memory is invalidated, with no successor."""


@dataclass(frozen=True, slots=True)
class Accept:
    """The row's proposal is carried out: its winner stays, its loser is invalidated (a retro row's proposal)."""


Choice: TypeAlias = KeepBoth | Winner | Forget | Merge | Retire | Accept


class ChoiceFields(BaseModel):
    """The optional fields the edges offer; a pydantic model so a refusal reads as any other bad argument."""

    model_config = ConfigDict(extra="forbid")

    keep_both: bool | None = None
    winner: str | None = Field(default=None, max_length=MAX_ID)
    forget: str | None = Field(default=None, max_length=MAX_ID)
    merge: str | None = None
    retire: bool | None = None
    accept: bool | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> ChoiceFields:
        # A flag set to false is no choice: a form or a shell sends false for every button not pressed.
        chosen = [
            name
            for name in ("keep_both", "winner", "forget", "merge", "retire", "accept")
            if getattr(self, name) not in (None, False)
        ]
        if len(chosen) != 1:
            raise ValueError("pass exactly one of keep_both, winner, forget, merge, retire or accept")
        return self


def choice_of(
    *,
    keep_both: bool | None = None,
    winner: str | None = None,
    forget: str | None = None,
    merge: str | None = None,
    retire: bool | None = None,
    accept: bool | None = None,
) -> Choice:
    """The choice the edge's fields name; raises pydantic's ``ValidationError`` unless exactly one is set."""
    fields = ChoiceFields(keep_both=keep_both, winner=winner, forget=forget, merge=merge, retire=retire, accept=accept)
    if fields.winner is not None:
        return Winner(fields.winner)
    if fields.forget is not None:
        return Forget(fields.forget)
    if fields.merge is not None:
        return Merge(fields.merge)
    if fields.retire:
        return Retire()
    if fields.accept:
        return Accept()
    return KeepBoth()
