"""The shape of a judge question: ``Question[A]``, asked with ``judge.ask(question) -> Result[A]``.

A question is a frozen dataclass holding what the judge may see (two
memories, one memory, a transcript chunk) and why it is asked (its
``purpose``, the usage ledger's column). Its class says everything else about
it, in one module under ``judge/questions/``:

- ``tier``: which of the configured models answers it;
- ``prompt()``: the instructions, the user message and the answer's schema;
- ``parse(raw)``: a provider's raw answer validated into ``A`` (a type from
  ``domain.verdicts``), or ``MalformedAnswer``/``InvalidAnswer``;
- ``fake_answer(scripted)``: a test's shorthand (``"duplicate"``, ``True``,
  a list of statements …) made into ``A``, for ``FakeJudge``.

The judges never look at which question they were given: a model-backed
judge sends ``prompt()`` to the model of ``tier`` and parses the reply with
``parse``; offer mode answers ``Unjudged``; the fake answers through
``fake_answer``. So a new question is one module and its test, and a call
with something that is not a question is a type error, not a silent default.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Final, Protocol, TypeVar

from zero_memory.judge.prompt import Prompt

A_co = TypeVar("A_co", covariant=True)

FAKE_RATIONALE: Final = "fake judge"
"""The rationale of every answer ``fake_answer`` makes from a shorthand."""


class Purpose(StrEnum):
    """Why the judge was called; the usage ledger's ``purpose``."""

    SCAN = "scan"
    REJUDGE = "rejudge"
    RESCAN = "rescan"
    PORTABILITY = "portability"
    GATE = "gate"
    RETRO = "retro"
    EXTRACT = "extract"
    LOOP_CLOSURE = "loop_closure"
    CODE_CHANGE = "code_change"


class Tier(StrEnum):
    """Which configured model answers a question."""

    ADJUDICATION = "adjudication"
    """``ZM_HYGIENE_MODEL``: the strong model, for anything that may retire a memory."""
    FAST = "fast"
    """``ZM_HYGIENE_FAST_MODEL``: a side is provisional (rank 0), so a cheaper model suffices."""
    EXTRACTION = "extraction"
    """``ZM_EXTRACT_MODEL``, else the fast model: reading transcript chunks."""


class Question(Protocol[A_co]):
    """One question to the judge, whose answer is an ``A``."""

    @property
    def purpose(self) -> Purpose: ...

    @property
    def tier(self) -> Tier: ...

    def prompt(self) -> Prompt: ...

    def parse(self, raw: str | dict[str, Any]) -> A_co: ...

    def fake_answer(self, scripted: object) -> A_co: ...
