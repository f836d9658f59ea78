"""The eval's figures on confusion matrices worked out by hand."""

from __future__ import annotations

import pytest

from zero_memory.domain.verdicts import Verdict
from zero_memory.judge.metrics import (
    FAILED,
    ConfusionMatrix,
    accuracy,
    failure_rate,
    false_supersede_rate,
    false_supersedes,
    precision,
    recall,
    reversed_supersedes,
)

DUP, A_B, B_A = Verdict.DUPLICATE, Verdict.A_SUPERSEDES_B, Verdict.B_SUPERSEDES_A
CONTRA, COMPL, UNREL = Verdict.CONTRADICTION, Verdict.COMPLEMENTARY, Verdict.UNRELATED

# 20 pairs, 14 judged right, 1 failure, 2 false supersedes, 1 reversed supersede.
WORKED = ConfusionMatrix.of(
    [(DUP, DUP)] * 3
    + [(DUP, COMPL)]
    + [(A_B, A_B), (A_B, B_A)]
    + [(B_A, B_A)] * 2
    + [(CONTRA, CONTRA), (CONTRA, None)]
    + [(COMPL, COMPL)] * 3
    + [(COMPL, A_B), (COMPL, DUP)]
    + [(UNREL, UNREL)] * 4
    + [(UNREL, B_A)]
)


def test_the_matrix_counts_labels_against_predictions() -> None:
    assert WORKED.total == 20
    assert WORKED.count(DUP, DUP) == 3
    assert WORKED.count(CONTRA, FAILED) == 1
    assert WORKED.support(COMPL) == 5
    assert WORKED.predicted(B_A) == 4


def test_accuracy_counts_failures_as_wrong() -> None:
    assert accuracy(WORKED) == pytest.approx(14 / 20)


@pytest.mark.parametrize(
    ("verdict", "expected_precision", "expected_recall"),
    [
        (DUP, 3 / 4, 3 / 4),
        (A_B, 1 / 2, 1 / 2),
        (B_A, 2 / 4, 2 / 2),
        (CONTRA, 1 / 1, 1 / 2),
        (COMPL, 3 / 4, 3 / 5),
        (UNREL, 4 / 4, 4 / 5),
    ],
)
def test_per_verdict_precision_and_recall(verdict: Verdict, expected_precision: float, expected_recall: float) -> None:
    assert precision(WORKED, verdict) == pytest.approx(expected_precision)
    assert recall(WORKED, verdict) == pytest.approx(expected_recall)


def test_a_failure_is_a_miss_for_recall_but_no_claim_for_precision() -> None:
    matrix = ConfusionMatrix.of([(CONTRA, CONTRA), (CONTRA, None)])
    assert precision(matrix, CONTRA) == 1.0
    assert recall(matrix, CONTRA) == 0.5
    assert failure_rate(matrix) == 0.5


def test_false_supersedes_are_pairs_to_keep_that_were_called_supersedes() -> None:
    assert false_supersedes(WORKED) == 2
    assert false_supersede_rate(WORKED) == pytest.approx(2 / 10)


def test_a_supersede_called_the_wrong_way_round_is_counted_apart() -> None:
    assert reversed_supersedes(WORKED) == 1
    assert reversed_supersedes(ConfusionMatrix.of([(A_B, B_A), (B_A, A_B), (B_A, B_A)])) == 2


def test_a_perfect_judge_scores_one_everywhere_and_zero_false_supersedes() -> None:
    matrix = ConfusionMatrix.of([(v, v) for v in Verdict for _ in range(3)])
    assert accuracy(matrix) == 1.0
    assert all(precision(matrix, v) == 1.0 and recall(matrix, v) == 1.0 for v in Verdict)
    assert false_supersede_rate(matrix) == 0.0
    assert failure_rate(matrix) == 0.0


def test_a_judge_that_calls_everything_a_supersede() -> None:
    matrix = ConfusionMatrix.of([(v, A_B) for v in Verdict])
    assert false_supersede_rate(matrix) == 1.0
    assert precision(matrix, A_B) == pytest.approx(1 / 6)
    assert recall(matrix, A_B) == 1.0
    assert precision(matrix, DUP) is None, "never called duplicate: precision is undefined, not 0"


def test_a_judge_that_always_fails() -> None:
    matrix = ConfusionMatrix.of([(v, None) for v in Verdict])
    assert accuracy(matrix) == 0.0
    assert failure_rate(matrix) == 1.0
    assert false_supersede_rate(matrix) == 0.0
    assert all(precision(matrix, v) is None for v in Verdict)


def test_an_empty_matrix_has_no_figures() -> None:
    empty = ConfusionMatrix.of([])
    assert (accuracy(empty), failure_rate(empty), false_supersede_rate(empty)) == (None, None, None)
    assert (precision(empty, DUP), recall(empty, DUP)) == (None, None)


def test_labels_may_be_given_as_names() -> None:
    assert ConfusionMatrix.of([("duplicate", "duplicate")]).count(DUP, DUP) == 1
    with pytest.raises(ValueError):
        ConfusionMatrix.of([("dupe", "duplicate")])
