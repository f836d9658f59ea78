"""The resource ``zm://memory/{id}``: one memory whole, as ``get_memory`` returns it.

It answers through the caller's visibility like every tool: another user's id
reads exactly as a missing one. Read tools point at it with resource links.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.types import ResourceLink

from zero_memory import errors
from zero_memory.app import App
from zero_memory.mcp.identity import Identity
from zero_memory.mcp.tooling import safe_text
from zero_memory.memory import lifecycle
from zero_memory.memory.views import preview

log = logging.getLogger("zero_memory.mcp")

MEMORY_URI = "zm://memory/{id}"
MIME = "application/json"


def memory_uri(memory_id: str) -> str:
    return MEMORY_URI.format(id=memory_id)


def memory_link(memory_id: str, content: str | None = None) -> ResourceLink:
    """A link a client can follow with ``resources/read`` to the memory's full row."""
    return ResourceLink(
        type="resource_link",
        uri=memory_uri(memory_id),
        name=memory_id,
        description=preview(content) if content else None,
        mime_type=MIME,
    )


def register(server: MCPServer[Any], app: App, identity: Identity) -> None:
    @server.resource(
        MEMORY_URI,
        name="memory",
        title="A memory",
        mime_type=MIME,
        description="One memory whole: its row, links, version history, audit trail and open disputes "
        "(the same JSON as the get_memory tool).",
    )
    async def memory(id: str, ctx: Context[Any, Any]) -> str:
        try:
            caller = identity.caller(ctx)
            result = await anyio.to_thread.run_sync(lifecycle.get_memory, app, caller, id)
        except errors.ZMError as error:
            if error.code is errors.Code.NOT_FOUND:
                raise ResourceNotFoundError(str(errors.not_found("memory"))) from None
            raise ResourceError(safe_text(error)) from None
        return result.model_dump_json()
