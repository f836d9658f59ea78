"""The edges reach the store through services: the CLI, the dashboard and the MCP tools import no store module.

Declared once in pyproject.toml (the "Edges reach the store through services"
contract) with its named exceptions (the auth edge, ``zm db``), and checked by
import-linter. A copy of the package with a store import planted in one module
of each edge shows the contract catching every one, while the exceptions stay
allowed.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.architecture.test_imports import PACKAGE, ROOT, lint_imports, lint_planted

CONTRACT = "Edges reach the store through services"

# One planted store import per edge: a command group, a dashboard view, an MCP tool module.
PLANTED = {
    "zero_memory.cli.projects": "zero_memory.store",
    "zero_memory.web.views.memories": "zero_memory.store.base",
    "zero_memory.mcp.tools_hygiene": "zero_memory.store.base",
}

# The auth edge reads tokens before there is a caller: it hands the store to the access functions that do.
AUTH_EDGE = ("zero_memory.mcp.http", "zero_memory.mcp.oauth")


def test_the_contract_is_kept_with_the_auth_edge_as_its_exception() -> None:
    for module in AUTH_EDGE:
        source = (ROOT / "src" / Path(*module.split("."))).with_suffix(".py").read_text(encoding="utf-8")
        assert "from zero_memory.store" in source, module  # the exception is used, not just declared
    result = lint_imports()
    assert f"{CONTRACT} KEPT" in result.stdout, result.stdout + result.stderr


def test_a_store_import_in_any_edge_breaks_the_contract(tmp_path: Path) -> None:
    broken = lint_planted(tmp_path, PLANTED)
    assert broken.returncode != 0
    assert f"{CONTRACT} BROKEN" in broken.stdout
    assert "Layers KEPT" in broken.stdout  # only this contract catches these: the store is below every edge
    for module, forbidden in PLANTED.items():
        assert f"{module} -> {forbidden}" in broken.stdout, (module, broken.stdout)


def test_no_edge_opens_a_store_transaction() -> None:
    """Beyond imports: no module of an edge calls ``.tx(`` or ``system_tx(`` on a store it was handed."""
    opening = re.compile(r"\.tx\(|\bsystem_tx\(")
    edges = [ROOT / "src" / PACKAGE / edge for edge in ("cli", "web", "mcp", "server")]
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for edge in edges
        for path in sorted(edge.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if opening.search(line)
    ]
    assert found == []
