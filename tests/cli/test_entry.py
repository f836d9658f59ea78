"""What the ``zm`` console script sets for its whole process before numpy is imported."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = (
    "from zero_memory.cli.entry import settle_process; settle_process(); "
    "import numpy; print(numpy._core.multiarray._get_madvise_hugepage())"
)


def probe(environ: dict[str, str]) -> str:
    env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"} | environ
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="numpy advises huge pages on Linux only")
def test_a_zm_process_asks_numpy_for_small_pages_unless_its_environment_says_otherwise() -> None:
    assert probe({}) == "False"
    assert probe({"NUMPY_MADVISE_HUGEPAGE": "1"}) == "True"
