"""Work done ahead on threads comes back in order, raises where its result would have, and leaves no thread."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from zero_memory.memory.ahead import worked_ahead


def ahead_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("zm-ahead")]


@pytest.mark.parametrize("ahead", [0, 1, 2, 5])
def test_results_come_back_in_the_order_of_the_items(ahead: int) -> None:
    with worked_ahead(lambda n: n * n, range(20), ahead=ahead) as results:
        assert list(results) == [(n, n * n) for n in range(20)]
    assert ahead_threads() == []


def test_no_more_than_ahead_items_are_taken_past_the_one_handed_back() -> None:
    taken: list[int] = []

    def items() -> Iterator[int]:
        for n in range(10):
            taken.append(n)
            yield n

    with worked_ahead(lambda n: n, items(), ahead=2) as results:
        for n, _ in results:
            assert len(taken) <= n + 3


def test_an_exception_in_the_work_is_raised_where_its_result_is_handed_back() -> None:
    def work(n: int) -> int:
        if n == 3:
            raise ValueError("three")
        return n

    handed: list[int] = []
    with pytest.raises(ValueError, match="three"), worked_ahead(work, range(10), ahead=2) as results:
        for n, _ in results:
            handed.append(n)
    assert handed == [0, 1, 2]
    assert ahead_threads() == []


def test_leaving_early_waits_for_the_work_under_way_and_starts_no_more() -> None:
    started: list[int] = []
    release = threading.Event()

    def work(n: int) -> int:
        started.append(n)
        release.wait(5)
        return n

    with pytest.raises(RuntimeError), worked_ahead(work, range(100), ahead=2) as results:
        release.set()
        for _ in results:
            raise RuntimeError("the caller fails")
    assert ahead_threads() == []
    assert len(started) <= 3
