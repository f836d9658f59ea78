"""Real Claude Code and Codex in a temporary home, set up with ``zm setup``, talking to a scripted fake model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.clients.harness import Agents, install_clients
from tests.fakes.agent_model import FakeAgentModel


@pytest.fixture(scope="session")
def clients_installed() -> None:
    install_clients()


@pytest.fixture
def agents(clients_installed: None, tmp_path: Path) -> Iterator[Agents]:
    home = tmp_path / "home"
    home.mkdir()
    with FakeAgentModel() as model:
        yield Agents(home=home, zm_home=tmp_path / "zm-home", model=model)
