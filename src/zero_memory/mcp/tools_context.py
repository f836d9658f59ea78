"""The front door of a session: ``build_context``, the briefing an agent reads before it starts."""

from __future__ import annotations

from pydantic import Field

from zero_memory.mcp.tooling import ToolArgs, ToolCall, Toolset
from zero_memory.memory.briefing import build_context as build_context_service
from zero_memory.memory.briefing_text import render
from zero_memory.memory.context_models import Briefing
from zero_memory.memory.recall import MAX_LIMIT

toolset = Toolset()


class BuildContextArgs(ToolArgs):
    topic: str | None = Field(
        default=None, description="What this session or task is about, in a sentence. Default: a general briefing."
    )
    project_hint: str | None = Field(
        default=None,
        description="The repository root (its absolute path) or git remote URL. Attaches this session to the "
        "project, so later writes go there.",
    )
    session_id: str | None = Field(
        default=None,
        max_length=500,
        description="Your conversation id, if you have one. Default: the MCP connection's session.",
    )
    limit: int = Field(default=10, ge=1, le=MAX_LIMIT, description=f"At most this many topic memories (1–{MAX_LIMIT}).")


# Not idempotent: what a briefing serves is recorded as surfacings, and a project_hint attaches the session.
# No resource links: clients hand the model one block per link besides the JSON (Claude Code: its id, URI and a
# preview), which would double the briefing past its budget; every item's id is in the JSON for get_memory.
@toolset.tool(title="Build context", mirror=render)
def build_context(call: ToolCall, args: BuildContextArgs) -> Briefing:
    """Call this first, at the start of every session or task, with `project_hint` set to the repository root.

    It attaches the session to that project and returns a briefing within a fixed size: `rules` to follow
    (pinned rules first, then conventions and preferences), `open_loops` (every open task and question of the
    project and of the user, oldest first, with how long each has been open: pick up or close what is done),
    `memories` relevant to `topic` (or the project's key decisions and gotchas), `pending_reviews` (review
    items waiting for the user; the `triage` prompt settles them) and `session` (`attached_project` is where
    a `remember` with no scope will write). Every item has its `id`, `kind`, `scope` and `age_days`, and only
    when set `pinned`, `open_days` and `truncated` (the item is whole in `get_memory`); a section's `omitted`
    counts what did not fit (use `recall`).
    """
    return build_context_service(
        call.app,
        call.caller,
        topic=args.topic,
        project_hint=args.project_hint,
        session_id=call.session(args.session_id),
        limit=args.limit,
    )
