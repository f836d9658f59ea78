"""scripts/surface.py prints the public surface a behaviour-preserving refactoring is diffed against: it must
reach every part of it, the routes of mounted applications (the dashboard, OAuth) included."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_surface_names_every_command_tool_and_mounted_route() -> None:
    shown = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "surface.py")], capture_output=True, text=True, timeout=240, check=True
    )
    surface = json.loads(shown.stdout)
    paths = {(route["path"], tuple(route["methods"])) for route in surface["http"]}
    assert ("/healthz", ("GET", "HEAD")) in paths
    assert ("/queue/{dispute_id}/resolve", ("POST",)) in paths  # inside the dashboard's mount
    assert ("/token", ("OPTIONS", "POST")) in paths  # OAuth, on with a public origin
    assert ("/static", ()) in paths  # a mount with no routes of its own is one path
    tools = {tool["name"] for tool in surface["mcp"]["tools"]}
    assert {"remember", "recall", "build_context", "resolve_conflict"} <= tools
    commands = {entry["command"] for entry in surface["cli"]}
    assert {"zm serve", "zm mcp", "zm db migrate", "zm setup"} <= commands
