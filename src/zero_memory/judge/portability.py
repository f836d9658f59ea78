"""The portability question: does a project memory hold outside its project? (docs/spec/hygiene.md §10)

Two callers, one question:

- the write-time gate (``remember`` with ``scope: "core" | "personal"`` while
  a project is attached) asks through ``gate_check(judge)``, purpose ``gate``;
- the audit pass of a full cycle asks through ``audit(judge, memory, now)``,
  purpose ``portability``.

Both answer ``(portable, confidence, rationale)`` or None, and None always
means "not shown portable": a timeout, a refusal, a malformed answer, a
stored key that no longer decrypts. The confidence floor
(``portable_min_confidence``) is applied by the caller, not here. The judge is
the owner's (``judge.owners.judge_for``): their key, their ledger rows.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from zero_memory.domain.memory import Kind, Memory
from zero_memory.judge.base import Judge, JudgedMemory, JudgedPortability, PortabilityRequest, Purpose

Answer = tuple[bool, float, str]

PortabilityCheck = Callable[[str, Kind], Answer | None]
"""(content, kind) -> (portable, confidence, rationale), or None when the judge gave no valid verdict."""


def gate_check(judge: Judge) -> PortabilityCheck | None:
    """The gate's check with the owner's judge, or None in offer mode (the gate then says no judge is configured)."""
    if judge.offer_mode:
        return None

    def check(content: str, kind: Kind) -> Answer | None:
        return ask(judge, PortabilityRequest(JudgedMemory(str(kind), 0.0, content), Purpose.GATE))

    return check


def audit(judge: Judge, memory: Memory, now: datetime) -> Answer | None:
    """The audit's question about one project memory."""
    return ask(judge, PortabilityRequest(JudgedMemory.of(memory, now), Purpose.PORTABILITY))


def ask(judge: Judge, request: PortabilityRequest) -> Answer | None:
    result = judge.judge(request)
    if isinstance(result, JudgedPortability):
        verdict = result.verdict
        return verdict.portable, verdict.confidence, verdict.rationale
    return None
