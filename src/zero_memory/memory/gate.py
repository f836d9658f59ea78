"""The write-time portability gate for ``scope: "core" | "personal"`` while a project is attached.

A request, not a command: a kind prefilter, then the portability judge must
confirm with confidence at or above ``portable_min_confidence``. Fail-closed:
no model, a timeout or a malformed verdict all deny, and a denial routes the
memory to the attached project with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from zero_memory.domain.memory import Kind
from zero_memory.domain.verdicts import PortabilityCheck

CORE_KINDS = frozenset({Kind.FACT, Kind.REFERENCE, Kind.GOTCHA})
PERSONAL_KINDS = CORE_KINDS | {Kind.PREFERENCE}


@dataclass(frozen=True, slots=True)
class GateDecision:
    granted: bool
    reason: str


def prefilter(kind: Kind, wants_core: bool) -> GateDecision | None:
    """The deterministic part: a decision, or None when the judge must decide."""
    admitted = CORE_KINDS if wants_core else PERSONAL_KINDS
    target = "core" if wants_core else "personal"
    if kind not in admitted:
        return GateDecision(False, f"kind {kind.value} is never portable to {target}")
    if not wants_core and kind is Kind.PREFERENCE:
        return GateDecision(True, "a preference belongs to the person")
    return None


def decide(
    kind: Kind, wants_core: bool, content: str, check: PortabilityCheck | None, min_confidence: float
) -> GateDecision:
    early = prefilter(kind, wants_core)
    if early is not None:
        return early
    if check is None:
        return GateDecision(False, "no portability judge is configured")
    verdict = check(content, kind)
    if verdict is None:
        return GateDecision(False, "the portability judge gave no valid verdict")
    portable, confidence, rationale = verdict
    if not portable:
        return GateDecision(False, f"the judge found it project-specific: {rationale}")
    if confidence < min_confidence:
        return GateDecision(False, f"the judge's confidence {confidence:.2f} is below {min_confidence:.2f}")
    return GateDecision(True, rationale)
