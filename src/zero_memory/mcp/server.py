"""The MCP server: the tools of every ``tools_*`` module, the memory resource, one identity.

The same server object serves stdio (``zm mcp``) and streamable HTTP
(``zm serve``); only its ``Identity`` differs. Tools are listed and called
through ``ZMServer.list_tools`` / ``call_tool``, so every call of every tool,
on every transport, goes through ``tooling.invoke``.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import partial
from types import ModuleType
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import Tool as ToolDescription

from zero_memory import __version__, errors
from zero_memory.app import App
from zero_memory.mcp import resources
from zero_memory.mcp.identity import Identity, roots_workspace
from zero_memory.mcp.tooling import ToolSpec, error_result, invoke
from zero_memory.memory.validation import field_name

INSTRUCTIONS = """\
zero-memory is this user's memory across sessions: decisions and their reasons, gotchas, conventions, \
preferences, facts, open tasks and questions.

- Start of a session or task: call `build_context` with `project_hint` = the repository root (absolute \
path) and a `topic`. Follow its rules, pick up or close its open loops; later writes go to its \
`attached_project`.
- Before deriving, investigating or asking something, `recall` it: it may already be known.
- Learned something durable (a decision and its why, a gotcha, a convention, a preference, a fact)? \
`remember` it at once, one self-contained statement with its `kind`. When it replaces an older memory, \
declare `supersedes`: `links: [{"type": "supersedes", "dst": "<old id>"}]`. If the answer lists `similar_existing`, \
follow its `hint`.
- A memory proved wrong or misleading: `challenge` it with the reason, or supersede it with the correction.
- Open work is a `task` or `open-question`; `close_loop` it when done or answered.
- Nothing is deleted: `forget` and supersedes are undone by `restore_memory`.
- Errors start with a stable code (`validation_failed:`, `not_found:`, `conflict:`, `unavailable:`, \
`internal:`); the rest says what to fix.
"""

INSTRUCTIONS_BUDGET_BYTES = 2_048
"""Clients put the instructions in the agent's system prompt and cut them near 2 KB (Claude Code)."""

TOOL_MODULE_PREFIX = "tools_"


class ZMServer(MCPServer[Any]):
    """An ``MCPServer`` whose tools are ``ToolSpec``s run by ``tooling.invoke``."""

    def __init__(self, app: App, identity: Identity) -> None:
        super().__init__(
            name="zero-memory",
            title="zero-memory",
            instructions=INSTRUCTIONS,
            version=__version__,
            log_level="WARNING",
        )
        self.zm = app
        self.identity = identity
        self.specs: dict[str, ToolSpec[Any, Any]] = {}

    def add_spec(self, spec: ToolSpec[Any, Any]) -> None:
        if spec.name in self.specs:
            raise ValueError(f"two tools are named {spec.name!r}")
        self.specs[spec.name] = spec

    async def list_tools(self) -> list[ToolDescription]:
        return [spec.describe() for spec in self.specs.values()] + await super().list_tools()

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None) -> Any:
        spec = self.specs.get(name)
        if spec is None:
            if self._tool_manager.get_tool(name) is not None:
                return await super().call_tool(name, arguments, context)
            return error_result(errors.validation(f"name: there is no tool {field_name(name)!r}"))
        ctx = context if context is not None else Context(mcp_server=self)
        self.zm.calls_in_flight += 1  # on the event loop's thread: no lock
        try:
            return await invoke(
                spec, arguments, self.zm, lambda: self.identity.caller(ctx), workspace=partial(roots_workspace, ctx)
            )
        finally:
            self.zm.calls_in_flight -= 1


def tool_modules() -> list[ModuleType]:
    """Every ``zero_memory.mcp.tools_*`` module, in name order: adding a tool module is enough to serve it."""
    package = importlib.import_module("zero_memory.mcp")
    names = sorted(
        info.name for info in pkgutil.iter_modules(package.__path__) if info.name.startswith(TOOL_MODULE_PREFIX)
    )
    return [importlib.import_module(f"zero_memory.mcp.{name}") for name in names]


def build_server(app: App, identity: Identity | None = None) -> ZMServer:
    """The server for one transport. A tool module exports ``toolset`` and may export
    ``register(server)`` for prompts or resources of its own."""
    server = ZMServer(app, identity or Identity())
    for module in tool_modules():
        toolset = getattr(module, "toolset", None)
        for spec in toolset.specs if toolset is not None else []:
            server.add_spec(spec)
        register = getattr(module, "register", None)
        if register is not None:
            register(server)
    resources.register(server, app, server.identity)
    return server
