"""``zm`` on a fresh data directory: ``zm`` in process, ``zm_binary`` as the real binary (tests/cli/harness.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.harness import Zm


def home_env(tmp_path: Path) -> dict[str, str]:
    return {"ZM_HOME": str(tmp_path / "zm-home"), "COLUMNS": "200"}


@pytest.fixture
def zm(tmp_path: Path) -> Zm:
    return Zm(home_env(tmp_path))


@pytest.fixture
def zm_binary(tmp_path: Path) -> Zm:
    return Zm(home_env(tmp_path), binary=True)
