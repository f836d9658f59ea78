"""The background services each kind of server process runs, started together and stopped in reverse."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from zero_memory.app import App
from zero_memory.server.services import HTTP, HTTP_SIBLING, STDIO, Services, running


def threads() -> set[str]:
    return {thread.name for thread in threading.enumerate()}


@pytest.mark.parametrize(
    ("services", "expected"),
    [
        (HTTP, {"zm-scheduler", "zm-capture", "zm-telemetry", "zm-index-follow"}),
        (HTTP_SIBLING, {"zm-telemetry", "zm-index-follow"}),
        (STDIO, {"zm-capture", "zm-index-follow"}),
        (Services(), set()),
    ],
    ids=["zm serve", "a sibling worker", "zm mcp", "nothing"],
)
def test_each_process_runs_the_services_it_chose(
    make_app: Callable[..., App], services: Services, expected: set[str]
) -> None:
    app = make_app({"ZM_HYGIENE_SCAN_INTERVAL_HOURS": "24"})
    before = threads()
    with running(app, services) as started:
        assert (started.warm is not None) == services.warm
        if started.warm is not None:
            assert started.warm.warm.wait(60)  # one pass of its own thread, then gone
            started.warm.stop()
        assert threads() - before == expected
        assert app.telemetry.buffering == services.telemetry
    assert not app.telemetry.buffering
    assert not threads() & expected


def test_the_scheduler_runs_only_when_an_interval_is_set(make_app: Callable[..., App]) -> None:
    app = make_app()
    assert not app.settings.scan_interval_hours
    before = threads()
    with running(app, HTTP) as started:
        assert started.warm is not None and started.warm.warm.wait(60)
        started.warm.stop()
        assert threads() - before == {"zm-capture", "zm-telemetry", "zm-index-follow"}
