"""Run ``zm`` as a subprocess, the way a user does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ZM = [sys.executable, "-m", "zero_memory.cli"]


class ZmResult:
    def __init__(self, completed: subprocess.CompletedProcess[str]) -> None:
        self.code = completed.returncode
        self.out = completed.stdout
        self.err = completed.stderr

    def json(self) -> Any:
        return json.loads(self.out)


@pytest.fixture
def zm(tmp_path: Path) -> Callable[..., ZmResult]:
    home = tmp_path / "zm-home"

    def run(*args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> ZmResult:
        environ = {k: v for k, v in os.environ.items() if not k.startswith("ZM_")}
        environ.update({"ZM_HOME": str(home), "COLUMNS": "200", **(env or {})})
        completed = subprocess.run(
            [*ZM, *args], capture_output=True, text=True, env=environ, input=stdin, timeout=120, check=False
        )
        return ZmResult(completed)

    return run
