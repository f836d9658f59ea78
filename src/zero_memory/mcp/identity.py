"""Who is calling: the caller of every tool comes from the transport, never from an argument.

Over HTTP the bearer middleware (``zero_memory.mcp.http``) authenticated the
request and put the user on it; on stdio the server was started for the local
user. The client's name comes from the handshake's ``clientInfo`` (the
2026 protocol carries it on every request), else the User-Agent, else
``unknown``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlparse

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.mcpserver import Context
from mcp.shared.message import ServerMessageMetadata
from mcp.types import ClientCapabilities, ListRootsRequest, ListRootsResult, RootsCapability

from zero_memory import errors
from zero_memory.access.caller import Caller

MAX_CLIENT_NAME = 100
SESSION_HEADER = "mcp-session-id"
ROOTS_WAIT_S = 3.0
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f]+")


@dataclass(frozen=True, slots=True)
class Identity:
    """How one server learns its caller.

    ``local_uid`` is set only for stdio, where the process speaks for one
    user; an HTTP server has none and refuses any request its middleware did
    not authenticate. ``stdio_session`` is the transport session of a stdio
    process: one connection, one session. ``workspace`` is the directory a
    stdio server was started for (``stdio_workspace``).
    """

    local_uid: str | None = None
    stdio_session: str | None = None
    workspace: str | None = None

    def caller(self, ctx: Context[Any, Any]) -> Caller:
        try:
            request = ctx.request_context.request
        except ValueError:  # called in process, outside any transport
            request = None
        if request is None:
            if self.local_uid is None:
                raise errors.unavailable("this server speaks MCP over HTTP only, with a bearer token")
            return Caller(
                uid=self.local_uid,
                client=client_name(ctx, None),
                session_id=self.stdio_session,
                workspace=self.workspace,
            )
        user = request.scope.get("user")
        if not isinstance(user, AuthenticatedUser) or not user.access_token.subject:
            raise errors.unavailable("the request carries no authenticated user")
        return Caller(
            uid=user.access_token.subject,
            client=client_name(ctx, request.headers.get("user-agent")),
            session_id=request.headers.get(SESSION_HEADER) or None,
        )


def stdio_workspace(environ: Mapping[str, str], cwd: str) -> str:
    """The directory a stdio server works for: the one its client was started in.

    Claude Code starts ``zm mcp`` in the session's directory and names its project directory in
    ``CLAUDE_PROJECT_DIR``; Codex starts it in the workspace (``-C``) and passes no such variable. Neither
    names a project or a session on its tool calls (docs/clients.md), so this is how a stdio session knows
    its repository.
    """
    return environ.get("CLAUDE_PROJECT_DIR") or cwd


async def roots_workspace(ctx: Context[Any, Any]) -> str | None:
    """The directory of the first ``file://`` root the client offers (``roots/list``), else None.

    For a session that knows no workspace of its own (HTTP): a client that offers roots names the
    directory it works in. One that offers none, or a protocol with no way to ask (the stateless 2026
    one), leaves the session to attach on its first hint.

    The question rides the tool call's own response stream: a client need not open the standalone
    stream (and one that does may not have opened it yet when its first call arrives).
    """
    try:
        session = ctx.session
        if not session.check_client_capability(ClientCapabilities(roots=RootsCapability())):
            return None
        with anyio.fail_after(ROOTS_WAIT_S):
            listed = await session.send_request(
                ListRootsRequest(),
                ListRootsResult,
                metadata=ServerMessageMetadata(related_request_id=ctx.request_context.request_id),
            )
    except Exception:
        return None
    for root in listed.roots:
        url = urlparse(str(root.uri))
        if url.scheme == "file" and url.path:
            return unquote(url.path)
    return None


def client_name(ctx: Context[Any, Any], user_agent: str | None) -> str:
    """The client's self-declared name, cleaned for storage as ``agent_name``."""
    name: str | None = None
    try:
        params = ctx.session.client_params
    except (AttributeError, LookupError, RuntimeError, ValueError):
        params = None
    if params is not None and params.client_info is not None:
        name = params.client_info.name
    cleaned = _UNPRINTABLE.sub(" ", name or user_agent or "").strip()[:MAX_CLIENT_NAME]
    return cleaned or "unknown"
