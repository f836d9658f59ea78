"""How do two memories relate? Hygiene's question, answered with a ``HygieneVerdict``.

Asked by the scan, the re-judge, the rescan and the retro pass (the purpose
says which). The adjudication model answers, or the fast one when a side is
provisional (rank 0): a capture cannot retire a confirmed memory on its own,
so a cheaper opinion suffices there. The instructions are ``pair_prompt.txt``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from zero_memory.domain.verdicts import HygieneVerdict, Verdict
from zero_memory.judge.parse import parse_answer, response_schema
from zero_memory.judge.prompt import JudgedMemory, Prompt, instructions, memory_block
from zero_memory.judge.question import FAKE_RATIONALE, Purpose, Tier

SCHEMA_NAME: Final = "hygiene_verdict"
SCHEMA: Final = response_schema(HygieneVerdict)


@dataclass(frozen=True, slots=True)
class PairRequest:
    """How do A and B relate? ``provisional``: a side has rank 0, so the fast model judges."""

    a: JudgedMemory
    b: JudgedMemory
    purpose: Purpose = Purpose.SCAN
    provisional: bool = False

    @property
    def tier(self) -> Tier:
        return Tier.FAST if self.provisional else Tier.ADJUDICATION

    def prompt(self) -> Prompt:
        return Prompt(
            system=instructions("pair_prompt.txt"),
            user=message(self.a, self.b),
            schema_name=SCHEMA_NAME,
            schema=SCHEMA,
            description="Record how Memory A and Memory B relate.",
        )

    def parse(self, raw: str | dict[str, Any]) -> HygieneVerdict:
        return parse_answer(HygieneVerdict, raw)

    def fake_answer(self, scripted: object) -> HygieneVerdict:
        """A verdict name or ``Verdict`` (confidence 1.0), a ``(verdict, confidence)`` pair, or a ``HygieneVerdict``."""
        if isinstance(scripted, tuple) and isinstance(scripted[0], str):
            verdict, confidence = scripted
            return HygieneVerdict(verdict=Verdict(verdict), confidence=confidence, rationale=FAKE_RATIONALE)
        if isinstance(scripted, str):
            return HygieneVerdict(verdict=Verdict(scripted), confidence=1.0, rationale=FAKE_RATIONALE)
        if isinstance(scripted, HygieneVerdict):
            return scripted
        raise TypeError(f"FakeJudge: {scripted!r} does not answer a pair request")


def message(a: JudgedMemory, b: JudgedMemory) -> str:
    return "\n\n".join(
        [memory_block("Memory A", a), memory_block("Memory B", b), "How do Memory A and Memory B relate?"]
    )
