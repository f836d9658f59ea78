"""The portability judge: does a project memory hold outside its project? (hygiene.md §10)

Two callers, one question:

- the write-time gate (``remember`` with ``scope: "core" | "personal"`` while
  a project is attached) asks through ``gate_check(app, owner)``, purpose ``gate``;
- the audit pass of a full cycle asks through ``portability_check(app, owner,
  memory, run_id)``, purpose ``portability``.

Both answer ``(portable, confidence, rationale)`` or None, and None always
means "not shown portable": offer mode, a timeout, a refusal, a malformed
answer, a stored key that no longer decrypts. The confidence floor
(``portable_min_confidence``) is applied by the caller, not here. The judge
is the owner's (``app.judge_factory``): their key, their ledger rows.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from zero_memory import errors
from zero_memory.domain.memory import Kind, Memory
from zero_memory.judge.base import Judge, JudgedMemory, JudgedPortability, PortabilityRequest, Purpose
from zero_memory.memory.gate import PortabilityCheck

if TYPE_CHECKING:
    from zero_memory.bootstrap import App

log = logging.getLogger(__name__)

Answer = tuple[bool, float, str]


def gate_check(app: App, owner: str) -> PortabilityCheck | None:
    """The gate's check for ``owner``'s writes, or None in offer mode (the gate then says no judge is configured).

    A stored key that cannot be decrypted makes a check that always denies:
    the write still lands, in the project, rather than failing.
    """
    if app.judge_factory is None:
        return None
    judge = _judge(app, owner, None)
    if judge is None:
        return _deny
    if judge.provider == "none":
        return None

    def check(content: str, kind: Kind) -> Answer | None:
        return _ask(judge, PortabilityRequest(JudgedMemory(str(kind), 0.0, content), Purpose.GATE))

    return check


def portability_check(app: App, owner: str, memory: Memory, run_id: str | None) -> Answer | None:
    """The audit's question about ``memory``, judged for ``owner`` within ``run_id``; None if not judged."""
    judge = _judge(app, owner, run_id)
    if judge is None:
        return None
    return _ask(judge, PortabilityRequest(JudgedMemory.of(memory, app.clock()), Purpose.PORTABILITY))


def _judge(app: App, owner: str, run_id: str | None) -> Judge | None:
    if app.judge_factory is None:
        return None
    try:
        judge: Judge = app.judge_factory(owner, run_id)
    except errors.ZMError as error:
        # The message names the fix (`zm user key set`) and never the key.
        log.warning("portability judge for %s unavailable: %s", owner, error)
        return None
    return judge


def _ask(judge: Judge, request: PortabilityRequest) -> Answer | None:
    result = judge.judge(request)
    if isinstance(result, JudgedPortability):
        verdict = result.verdict
        return verdict.portable, verdict.confidence, verdict.rationale
    return None


def _deny(content: str, kind: Kind) -> Answer | None:
    return None
