"""Pytest fixtures for the fake providers; a conftest imports the ones it needs:

    from tests.fakes.fixtures import anthropic_server, openai_server  # noqa: F401

Each test gets its own server on a fresh port, stopped when the test ends.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.openai_server import FakeOpenAIServer


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def anthropic_server() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server
