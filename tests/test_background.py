"""The one background-thread loop: a step, a wait, again, until stopped; a failed step is logged, not fatal,
and a step that keeps failing is tried less and less often."""

from __future__ import annotations

import logging
import threading

import pytest

from zero_memory.background import BACKOFF_MAX_S, Loop, backoff, worth_logging

NEVER_S = 3600.0
SOON_S = 10.0


def counting(steps: list[int], reached: threading.Event, at: int) -> Loop:
    def step() -> None:
        steps.append(len(steps))
        if len(steps) >= at:
            reached.set()

    return Loop("zm-test", step, every=NEVER_S, first=0.0, failed="the test's step")


def test_the_first_step_comes_after_first_and_a_wake_brings_the_next() -> None:
    steps: list[int] = []
    reached = threading.Event()
    loop = counting(steps, reached, at=2)
    loop.start()
    try:
        assert not reached.wait(0.2)  # the second step waits for its hour
        assert steps == [0]
        loop.wake()
        assert reached.wait(SOON_S)
    finally:
        loop.stop()
    assert steps == [0, 1]


def test_without_first_the_loop_waits_its_interval_before_the_first_step() -> None:
    ran = threading.Event()
    loop = Loop("zm-test", ran.set, every=NEVER_S, failed="the test's step")
    loop.start()
    assert not ran.wait(0.2)
    loop.stop()
    assert not ran.is_set()  # stopping ends the wait without a step


def test_the_interval_may_be_asked_after_each_step() -> None:
    waits = iter([0.0, 0.0, 0.0, NEVER_S])  # the first before the first step
    steps: list[int] = []
    reached = threading.Event()

    def step() -> None:
        steps.append(1)
        if len(steps) == 3:
            reached.set()

    loop = Loop("zm-test", step, every=lambda: next(waits), failed="the test's step")
    loop.start()
    try:
        assert reached.wait(SOON_S)
    finally:
        loop.stop()
    assert len(steps) == 3


def test_a_failed_step_is_logged_and_the_loop_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[int] = []
    again = threading.Event()

    def step() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("the database went away")
        again.set()

    loop = Loop("zm-test", step, every=0.01, first=0.0, failed="the test's step")
    with caplog.at_level(logging.ERROR, logger="zero_memory.background"):
        loop.start()
        try:
            assert again.wait(SOON_S)
        finally:
            loop.stop()
    assert "the test's step failed" in caplog.text and "the database went away" in caplog.text


def test_stop_before_start_does_nothing() -> None:
    Loop("zm-test", lambda: None, every=NEVER_S, failed="the test's step").stop()


@pytest.mark.parametrize(
    ("every", "failures", "expected"),
    [
        pytest.param(1.0, 0, 1.0, id="a success keeps the interval"),
        pytest.param(1.0, 1, 2.0, id="doubled after a failure"),
        pytest.param(1.0, 3, 8.0, id="doubled at each failure in a row"),
        pytest.param(1.0, 10, BACKOFF_MAX_S, id="never above the cap"),
        pytest.param(1.0, 10_000, BACKOFF_MAX_S, id="any run of failures"),
        pytest.param(3600.0, 5, 3600.0, id="a loop slower than the cap keeps its interval"),
        pytest.param(0.0, 5, 0.0, id="a loop with no wait keeps none"),
    ],
)
def test_the_wait_after_failures_in_a_row(every: float, failures: int, expected: float) -> None:
    assert backoff(every, failures) == expected


def test_a_run_of_failures_is_logged_at_its_first_second_fourth_eighth() -> None:
    assert [n for n in range(1, 20) if worth_logging(n)] == [1, 2, 4, 8, 16]


def test_a_step_that_keeps_failing_is_logged_whole_once_then_in_a_line_now_and_then(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list[int] = []
    recovered = threading.Event()

    def step() -> None:
        calls.append(1)
        if len(calls) <= 9:
            raise RuntimeError(f"the database went away ({len(calls)})")
        recovered.set()

    loop = Loop("zm-test", step, every=0.0, first=0.0, failed="the test's step")
    with caplog.at_level(logging.WARNING, logger="zero_memory.background"):
        loop.start()
        try:
            assert recovered.wait(SOON_S)
        finally:
            loop.stop()
    lines = [(r.levelno, r.getMessage(), r.exc_info is not None) for r in caplog.records]
    assert lines == [
        (logging.ERROR, "the test's step failed", True),
        (
            logging.ERROR,
            "the test's step failed 2 times in a row, next in 0 s: RuntimeError('the database went away (2)')",
            False,
        ),
        (
            logging.ERROR,
            "the test's step failed 4 times in a row, next in 0 s: RuntimeError('the database went away (4)')",
            False,
        ),
        (
            logging.ERROR,
            "the test's step failed 8 times in a row, next in 0 s: RuntimeError('the database went away (8)')",
            False,
        ),
        (logging.WARNING, "the test's step succeeded after 9 failures in a row", False),
    ]
