"""Does a project memory hold outside its project? (docs/spec/hygiene.md §10), answered with a ``PortabilityVerdict``.

Two callers, one question, always on the adjudication model:

- the write-time gate (``remember`` with ``scope: "core" | "personal"`` while
  a project is attached) asks through ``gate_check(judge)``, purpose ``gate``;
- the audit pass of a full cycle asks through ``audit(judge, memory, now)``,
  purpose ``portability``.

Both answer ``(portable, confidence, rationale)`` or None, and None always
means "not shown portable": a timeout, a refusal, a malformed answer, a
stored key that no longer decrypts. The confidence floor
(``portable_min_confidence``) is applied by the caller, not here. The judge is
the owner's (``judge.owners.judge_for``): their key, their ledger rows. The
instructions are ``portability_prompt.txt``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from zero_memory.domain.memory import Kind, Memory
from zero_memory.domain.verdicts import PortabilityAnswer, PortabilityCheck, PortabilityVerdict
from zero_memory.judge import yes_no
from zero_memory.judge.base import Judge
from zero_memory.judge.parse import parse_answer, response_schema
from zero_memory.judge.prompt import JudgedMemory, Prompt, instructions, memory_block
from zero_memory.judge.question import FAKE_RATIONALE, Purpose, Tier

SCHEMA_NAME: Final = "portability_verdict"
SCHEMA: Final = response_schema(PortabilityVerdict)


@dataclass(frozen=True, slots=True)
class PortabilityRequest:
    """Does this project memory hold outside its project? Judged by the adjudication model."""

    memory: JudgedMemory
    purpose: Purpose = Purpose.PORTABILITY

    @property
    def tier(self) -> Tier:
        return Tier.ADJUDICATION

    def prompt(self) -> Prompt:
        return Prompt(
            system=instructions("portability_prompt.txt"),
            user=message(self.memory),
            schema_name=SCHEMA_NAME,
            schema=SCHEMA,
            description="Record whether the memory is portable.",
        )

    def parse(self, raw: str | dict[str, Any]) -> PortabilityVerdict:
        return parse_answer(PortabilityVerdict, raw)

    def fake_answer(self, scripted: object) -> PortabilityVerdict:
        """A bool (confidence 1.0) or a ``PortabilityVerdict``."""
        if isinstance(scripted, bool):
            return PortabilityVerdict(portable=scripted, confidence=1.0, rationale=FAKE_RATIONALE)
        if isinstance(scripted, PortabilityVerdict):
            return scripted
        raise TypeError(f"FakeJudge: {scripted!r} does not answer a portability request")


def message(memory: JudgedMemory) -> str:
    return "\n\n".join([memory_block("Memory", memory), "Is this memory portable?"])


def gate_check(judge: Judge) -> PortabilityCheck | None:
    """The gate's check with the owner's judge, or None in offer mode (the gate then says no judge is configured)."""
    if judge.offer_mode:
        return None

    def check(content: str, kind: Kind) -> PortabilityAnswer | None:
        return ask(judge, PortabilityRequest(JudgedMemory(str(kind), 0.0, content), Purpose.GATE))

    return check


def audit(judge: Judge, memory: Memory, now: datetime) -> PortabilityAnswer | None:
    """The audit's question about one project memory."""
    return ask(judge, PortabilityRequest(JudgedMemory.of(memory, now), Purpose.PORTABILITY))


def ask(judge: Judge, request: PortabilityRequest) -> PortabilityAnswer | None:
    return yes_no.ask(judge, request, "portable")
