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
from starlette.routing import Mount
from typer.testing import CliRunner

from zero_memory.bootstrap import build_app
from zero_memory.cli.main import cli
from zero_memory.embedding.hashing import HashingEmbedder
from zero_memory.mcp.server import build_server
from zero_memory.server.app import create_app
from zero_memory.settings import Settings

PUBLIC_URL = "http://127.0.0.1:8787"
"""A public origin turns OAuth on, so its endpoints are part of the surface too."""


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


def routes(routes_: list[Any], prefix: str = "") -> list[dict[str, Any]]:
    """Every route with its full path, walking into mounted applications and routers (the dashboard is a
    mount, and so is MCP's endpoint): a mount that exposes no routes of its own is listed as one path."""
    found: list[dict[str, Any]] = []
    for route in routes_:
        path = prefix + getattr(route, "path", "")
        inner = getattr(route, "routes", None)
        if isinstance(route, Mount) and inner:
            found += routes(list(inner), path)
        else:
            kind = "mount" if isinstance(route, Mount) else type(route).__name__.lower()
            found.append({"path": path or "/", "kind": kind, "methods": sorted(getattr(route, "methods", None) or [])})
    return found


def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        settings = Settings(home=Path(home), database_url=f"sqlite:///{home}/zm.db")
        app = build_app(settings, embedder=HashingEmbedder())
        try:
            surface = {
                "cli": commands(typer.main.get_command(cli)),
                "mcp": asyncio.run(mcp_surface(build_server(app))),
                "http": routes(create_app(app, public_url=PUBLIC_URL).routes),
            }
        finally:
            app.close()
    print(json.dumps(surface, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
