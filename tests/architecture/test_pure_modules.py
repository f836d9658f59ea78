"""The pure decisions stay pure: decide, plan, choice, gate and route import no store, no app and no judge.

Declared once in pyproject.toml (the "Pure decisions" contract) and checked by
import-linter, like the layers. A copy of the package with one forbidden
import planted in each pure module shows the contract catching every one;
a fresh interpreter shows that loading ``hygiene.decide`` loads no judge
module (it used to load seventeen, the test fake among them).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.architecture.test_imports import ROOT, lint_imports, lint_planted

PURE = (
    "zero_memory.hygiene.decide",
    "zero_memory.conflicts.plan",
    "zero_memory.conflicts.choice",
    "zero_memory.memory.gate",
    "zero_memory.capture.route",
)

# One forbidden import per pure module, between them the store, the app, a provider, the fake and the factory.
PLANTED = {
    "zero_memory.hygiene.decide": "zero_memory.store.base",
    "zero_memory.conflicts.plan": "zero_memory.app",
    "zero_memory.conflicts.choice": "zero_memory.judge.openai_provider",
    "zero_memory.memory.gate": "zero_memory.judge.fake",
    "zero_memory.capture.route": "zero_memory.judge.factory",
}


def test_the_pure_modules_exist_and_the_contract_is_kept() -> None:
    for module in PURE:
        assert (ROOT / "src" / Path(*module.split("."))).with_suffix(".py").is_file(), module
    result = lint_imports()
    assert "Pure decisions KEPT" in result.stdout, result.stdout + result.stderr


def test_a_forbidden_import_in_any_pure_module_breaks_the_contract(tmp_path: Path) -> None:
    broken = lint_planted(tmp_path, PLANTED)
    assert broken.returncode != 0
    assert "Pure decisions BROKEN" in broken.stdout
    assert "Layers KEPT" in broken.stdout  # only the new contract catches these
    for module, forbidden in PLANTED.items():
        assert f"{module} -> {forbidden}" in broken.stdout, (module, broken.stdout)


def test_importing_the_decision_loads_no_judge_store_or_app() -> None:
    probe = (
        "import sys, zero_memory.hygiene.decide; "
        "print(' '.join(m for m in sys.modules if m.startswith('zero_memory.')))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    ).stdout.split()
    assert "zero_memory.hygiene.decide" in loaded
    for prefix in ("zero_memory.judge", "zero_memory.store", "zero_memory.app"):
        assert not [m for m in loaded if m == prefix or m.startswith(prefix + ".")], loaded
