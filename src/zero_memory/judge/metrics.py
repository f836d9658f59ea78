"""How good a judge is, as pure functions over a confusion matrix.

Rows are the labelled verdicts, columns the judge's verdicts plus one column,
``failed``, for calls that gave no judgement. A failure is a miss for recall
and accuracy (the pair went unjudged) but not a prediction for precision
(nothing was claimed). A ratio with nothing to divide by is ``None``, not 0:
"no pair was called a duplicate" is not "duplicate precision is 0".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

from zero_memory.domain.verdicts import Verdict

FAILED: Final = "failed"
VERDICTS: Final = tuple(Verdict)
COLUMNS: Final = (*(str(v) for v in Verdict), FAILED)
KEEP_BOTH: Final = frozenset({Verdict.COMPLEMENTARY, Verdict.UNRELATED})
SUPERSEDES: Final = frozenset({Verdict.A_SUPERSEDES_B, Verdict.B_SUPERSEDES_A})


@dataclass(frozen=True, slots=True)
class ConfusionMatrix:
    """Counts of (label, prediction); a prediction is a verdict name or ``failed``."""

    counts: Mapping[tuple[str, str], int] = field(default_factory=dict)

    @classmethod
    def of(cls, pairs: Iterable[tuple[Verdict | str, Verdict | str | None]]) -> ConfusionMatrix:
        """From (label, prediction) pairs; a ``None`` prediction is a failure."""
        counts: Counter[tuple[str, str]] = Counter()
        for label, predicted in pairs:
            counts[(str(Verdict(label)), FAILED if predicted is None else str(predicted))] += 1
        return cls(dict(counts))

    def count(self, label: Verdict | str, predicted: Verdict | str) -> int:
        return self.counts.get((str(label), str(predicted)), 0)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def support(self, label: Verdict | str) -> int:
        """Pairs labelled ``label``."""
        return sum(n for (row, _), n in self.counts.items() if row == str(label))

    def predicted(self, verdict: Verdict | str) -> int:
        """Pairs the judge called ``verdict`` (or ``failed``)."""
        return sum(n for (_, column), n in self.counts.items() if column == str(verdict))


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def precision(matrix: ConfusionMatrix, verdict: Verdict) -> float | None:
    """Of the pairs the judge called ``verdict``, the share labelled so."""
    return _ratio(matrix.count(verdict, verdict), matrix.predicted(verdict))


def recall(matrix: ConfusionMatrix, verdict: Verdict) -> float | None:
    """Of the pairs labelled ``verdict``, the share the judge called so (failures are misses)."""
    return _ratio(matrix.count(verdict, verdict), matrix.support(verdict))


def accuracy(matrix: ConfusionMatrix) -> float | None:
    """The share of all pairs judged exactly right; failures count as wrong."""
    return _ratio(sum(matrix.count(v, v) for v in VERDICTS), matrix.total)


def failure_rate(matrix: ConfusionMatrix) -> float | None:
    return _ratio(matrix.predicted(FAILED), matrix.total)


def false_supersedes(matrix: ConfusionMatrix) -> int:
    """Pairs that should keep both (complementary, unrelated) that the judge called a supersede."""
    return sum(matrix.count(label, called) for label in KEEP_BOTH for called in SUPERSEDES)


def false_supersede_rate(matrix: ConfusionMatrix) -> float | None:
    """``false_supersedes`` over all pairs labelled complementary or unrelated.

    The number to watch before switching models: each false supersede at high
    confidence retires a memory that should have stayed.
    """
    return _ratio(false_supersedes(matrix), sum(matrix.support(label) for label in KEEP_BOTH))


def reversed_supersedes(matrix: ConfusionMatrix) -> int:
    """Supersedes called the wrong way round: the memory to keep would be the one retired."""
    return matrix.count(Verdict.A_SUPERSEDES_B, Verdict.B_SUPERSEDES_A) + matrix.count(
        Verdict.B_SUPERSEDES_A, Verdict.A_SUPERSEDES_B
    )
