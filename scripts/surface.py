"""Print the public surface as JSON: every CLI command, MCP tool, prompt and resource, and HTTP route.

A refactoring that must not change behaviour is checked by diffing this output before and after:

    .venv/bin/python scripts/surface.py > /tmp/before.json   # on the old commit
    .venv/bin/python scripts/surface.py | diff /tmp/before.json -
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

import typer
from typer.testing import CliRunner

from zero_memory.bootstrap import build_app
from zero_memory.cli.main import cli
from zero_memory.embedding.hashing import HashingEmbedder
from zero_memory.mcp.server import build_server
from zero_memory.settings import Settings
from zero_memory.web import dashboard
from zero_memory.web.app import create_app


def commands(command: Any, path: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """Every command with the help a user sees (``zm ... --help``), depth first."""
    shown = CliRunner().invoke(cli, [*path, "--help"], env={"COLUMNS": "120", "NO_COLOR": "1"}, terminal_width=120)
    found = [{"command": " ".join(("zm", *path)), "help": shown.output}]
    for name in sorted(getattr(command, "commands", {})):
        found += commands(command.commands[name], (*path, name))
    return found


async def mcp_surface(server: Any) -> dict[str, Any]:
    tools = await server.list_tools()
    prompts = await server.list_prompts()
    templates = await server.list_resource_templates()
    return {
        "instructions": server.instructions,
        "tools": [tool.model_dump(mode="json", exclude_none=True) for tool in tools],
        "prompts": [prompt.model_dump(mode="json", exclude_none=True) for prompt in prompts],
        "resource_templates": [t.model_dump(mode="json", exclude_none=True) for t in templates],
    }


def routes(app: Any) -> list[dict[str, Any]]:
    return [
        {"path": getattr(route, "path", ""), "methods": sorted(getattr(route, "methods", None) or [])}
        for route in app.routes
    ]


def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        settings = Settings(home=Path(home), database_url=f"sqlite:///{home}/zm.db")
        app = build_app(settings, embedder=HashingEmbedder())
        try:
            surface = {
                "cli": commands(typer.main.get_command(cli)),
                "mcp": asyncio.run(mcp_surface(build_server(app))),
                "http": routes(create_app(app, extra_routes=dashboard.routes(app))),
            }
        finally:
            app.close()
    print(json.dumps(surface, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
