"""The settlement tests that touch a database run on SQLite and on PostgreSQL, like the store's contract suite."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from zero_memory.app import App


@pytest.fixture(params=["sqlite", "postgres"])
def app(request: pytest.FixtureRequest, make_app: Callable[..., App]) -> App:
    """An app with alice and bob, on each backend in turn."""
    return make_app(backend=request.param)
