"""The import graph of src/zero_memory: layers in one declared order, and no cycle anywhere.

The layers are declared once, in pyproject.toml (``[tool.importlinter]``), and
checked by import-linter; cycles inside a layer are checked here over the same
graph. Both checks run on a copy of the package with a deliberate back import,
to show that they fail when someone adds one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "zero_memory"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def cycles(package: str = PACKAGE) -> list[list[str]]:
    """Every strongly connected set of two or more modules (Tarjan's algorithm, iteratively)."""
    graph = grimp.build_graph(package, cache_dir=None)
    modules = sorted(graph.modules)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in modules:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, child = work.pop()
            if child == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            if child < len(edges[node]):
                work.append((node, child + 1))
                nxt = edges[node][child]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found


def lint_imports(env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def lint_planted(tmp_path: Path, planted: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    """import-linter over a copy of the package with ``import X  # planted`` appended to each named module
    (a dotted module name -> the module it imports)."""
    copy = tmp_path / "src"
    shutil.copytree(ROOT / "src" / PACKAGE, copy / PACKAGE, ignore=shutil.ignore_patterns("__pycache__"))
    for module, forbidden in planted.items():
        path = (copy / Path(*module.split("."))).with_suffix(".py")
        path.write_text(path.read_text(encoding="utf-8") + f"\nimport {forbidden}  # planted\n", encoding="utf-8")
    return lint_imports({**os.environ, "PYTHONPATH": str(copy)})


def test_the_import_graph_has_no_cycle() -> None:
    assert cycles() == []


def test_the_layers_are_kept() -> None:
    result = lint_imports()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Layers KEPT" in result.stdout and ", 0 broken" in result.stdout


def test_a_deliberate_back_import_breaks_both_checks(tmp_path: Path) -> None:
    copy = tmp_path / "src"
    shutil.copytree(ROOT / "src" / PACKAGE, copy / PACKAGE, ignore=shutil.ignore_patterns("__pycache__"))
    scopes = copy / PACKAGE / "domain" / "scopes.py"
    # A domain rule reaching up into the CLI: a layer broken and a cycle made (the CLI imports the domain).
    scopes.write_text(scopes.read_text(encoding="utf-8") + "\nfrom zero_memory.cli import main as _cli\n")
    env = {**os.environ, "PYTHONPATH": str(copy)}
    probe = (
        "import sys, zero_memory; from tests.architecture.test_imports import cycles; "
        f"assert zero_memory.__file__.startswith({str(copy)!r}), zero_memory.__file__; "
        "print(len(cycles()))"
    )
    counted = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        env={**env, "PYTHONPATH": f"{copy}{os.pathsep}{ROOT}"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert counted.returncode == 0, counted.stderr
    assert int(counted.stdout.strip()) >= 1
    broken = lint_imports(env)
    assert broken.returncode != 0
    assert "zero_memory.domain.scopes -> zero_memory.cli.main" in broken.stdout
