"""The server composes, the dashboard and MCP are two edges beside each other.

Declared in the "Layers" contract of pyproject.toml: ``zero_memory.server`` sits above ``zero_memory.web``
and ``zero_memory.mcp``, which share a layer and so may not import each other (the dashboard used to mount
MCP, and reached its bearer-token edge). A copy of the package with each of those imports planted shows the
contract catching every one.
"""

from __future__ import annotations

from pathlib import Path

from tests.architecture.test_imports import PACKAGE, ROOT, lint_imports, lint_planted

# A planted import per rule: the dashboard reaching MCP, MCP reaching the dashboard, each reaching the server.
PLANTED = {
    "zero_memory.web.dashboard": "zero_memory.mcp.http",
    "zero_memory.mcp.tools_memory": "zero_memory.web.rendering",
    "zero_memory.web.auth": "zero_memory.server.services",
    "zero_memory.mcp.server": "zero_memory.server.app",
}


def test_the_server_package_exists_above_the_dashboard_and_mcp() -> None:
    for package in ("server", "web", "mcp"):
        assert (ROOT / "src" / PACKAGE / package / "__init__.py").is_file(), package
    result = lint_imports()
    assert "Layers KEPT" in result.stdout, result.stdout + result.stderr


def test_the_dashboard_and_mcp_reaching_each_other_or_the_server_break_the_layers(tmp_path: Path) -> None:
    broken = lint_planted(tmp_path, PLANTED)
    assert broken.returncode != 0
    assert "Layers BROKEN" in broken.stdout
    for module, forbidden in PLANTED.items():
        assert f"{module} -> {forbidden}" in broken.stdout, (module, broken.stdout)
