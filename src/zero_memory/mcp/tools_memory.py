"""The memory tools: remember, recall, get_memory, forget, restore_memory, close_loop, move_memories, link.

Each parses its arguments, calls one service function and returns its model;
the descriptions are what an agent reads to decide when and how to call.
"""

from __future__ import annotations

from typing import Literal

from mcp.types import ResourceLink
from pydantic import Field

from zero_memory.domain.anchors import MAX_ANCHORS
from zero_memory.domain.memory import MAX_CONTENT_CHARS, Kind
from zero_memory.mcp import mirrors
from zero_memory.mcp.resources import memory_link
from zero_memory.mcp.tooling import ToolArgs, ToolCall, Toolset
from zero_memory.memory import lifecycle
from zero_memory.memory.models import (
    AnchorSpec,
    GetMemoryResult,
    LifecycleResult,
    LinkResult,
    LinkSpec,
    MoveResult,
    RecallResult,
    RememberRequest,
    RememberResult,
    SourceSpec,
)
from zero_memory.memory.recall import MAX_LIMIT
from zero_memory.memory.recall import recall as recall_service
from zero_memory.memory.write import remember as remember_service

toolset = Toolset()

MemoryId = Field(description="A memory id (mem_…), as recall or remember returned it.")
SessionId = Field(
    default=None,
    max_length=500,
    description="Your conversation id, if you have one. Writes and reads with the same session id are one "
    "session: it attaches to the first project a hint names. Default: the MCP connection's session.",
)
ProjectHint = Field(
    default=None,
    description="The project: a repository path, a git remote URL or a project name. A hint that names no "
    "project of yours creates one (named after the directory or remote).",
)


class RememberArgs(ToolArgs):
    content: str = Field(
        description="One self-contained statement, understandable without this conversation. "
        f"At most {MAX_CONTENT_CHARS} characters; never a credential."
    )
    kind: Kind = Field(
        description="fact, decision (with its why), preference, convention, gotcha, reference, "
        "episode, task or open-question (the last two stay open until close_loop)."
    )
    scope: str | None = Field(
        default=None,
        description='Where it belongs: "core" (true outside any project), '
        '"personal" (about the user), a project slug or a full scope path. '
        "Default: project_hint, else the session's project.",
    )
    project_hint: str | None = ProjectHint
    session_id: str | None = SessionId
    links: list[LinkSpec] = Field(
        default_factory=list,
        description='Relations to existing memories: [{"type": "supersedes" | "relates_to" | "derived_from", '
        '"dst": "<id>"}]. Declare "supersedes" for every memory this one replaces (at most 10).',
    )
    provisional: bool = Field(
        default=False,
        description="True only for automatic captures (transcript watchers, "
        "harvests): stored at rank 0, below what agents and people state.",
    )
    source: SourceSpec | None = Field(
        default=None,
        description="Pointers, never content: thread, client_session_id, imported_from, client, "
        "conversation_id, chunk_hash.",
    )
    anchors: list[AnchorSpec] = Field(
        default_factory=list,
        max_length=MAX_ANCHORS,
        description='The code this memory is about, in the project\'s repository: [{"path": "src/net/client.py", '
        '"symbol": "retry"}] (symbol optional: a function, class, Class.method or constant). The server also '
        "anchors files and symbols it finds named in the content, and flags the memory when that code changes.",
    )


def _declares_supersede(args: RememberArgs) -> bool:
    return any(link.type == "supersedes" for link in args.links)


@toolset.tool(title="Remember", idempotent=True, mirror=mirrors.remember, declares_supersede=_declares_supersede)
def remember(call: ToolCall, args: RememberArgs) -> RememberResult:
    """Store one thing worth knowing in a later session: a decision and its why, a gotcha, a convention,
    a preference, a fact, a reference, an episode, an open task or question.

    Recall first: if a memory already says it, do not write it again. Write one self-contained statement;
    split long notes into several memories.

    Where it goes: `scope` ("core" for knowledge true outside any project, "personal" for facts about the
    user, a project slug or a scope path), else `project_hint` (the repository path or git remote), else the
    project this session is attached to. With none of these the write is refused with
    `validation_failed: scope_target_required:`.

    Updating what a memory says: write the new statement and declare what it replaces,
    `links: [{"type": "supersedes", "dst": "<old id>"}]`. Each old memory is retired in the same step (and
    its open loop closed); nothing is deleted.

    The answer: `status` is `created`; `absorbed` when this memory already exists (`id` is the existing one,
    nothing new was written); `yielded` when a provisional write met an authoritative memory saying the same
    (`id` is that memory). `superseded` lists what was retired, `skipped_links` the declared links that were
    dead, missing or self. `similar_existing` (only when you declared nothing) lists close memories: if the
    new one replaces one of them, follow `hint` (forget the old one now, declare supersedes next time); if
    they are different facets, nothing to do. `routed_to_project` means a core or personal write looked
    project-specific and was stored in the session's project instead. `length_directive` asks you to split
    an over-long memory. Text containing a credential is refused (`secret_content_rejected`), never stored.
    """
    request = RememberRequest(
        content=args.content,
        kind=args.kind,
        scope=args.scope,
        project_hint=args.project_hint,
        session_id=args.session_id,
        links=args.links,
        provisional=args.provisional,
        source=args.source,
        anchors=args.anchors,
    )
    return remember_service(call.app, call.caller, request)


class RecallArgs(ToolArgs):
    query: str = Field(description="What you are about to work on or want to know; meaning and words both count.")
    scopes: list[str] | None = Field(
        default=None,
        description="Where to look. Default: the session's project plus your personal and core memories. "
        '["*"] for everything you can see; or "core", "personal", project slugs, scope paths.',
    )
    kinds: list[Kind] | None = Field(default=None, description="Only these kinds.")
    limit: int = Field(default=10, ge=1, le=MAX_LIMIT, description=f"At most this many hits (1–{MAX_LIMIT}).")
    project_hint: str | None = ProjectHint
    session_id: str | None = SessionId


def _hit_links(result: RecallResult) -> list[ResourceLink]:
    return [memory_link(hit.id, hit.content) for hit in result.hits]


# Not read-only and not idempotent: every hit is recorded as a surfacing (what reinforcement and judge
# re-examination read), and a project_hint attaches the session (and may create the project).
@toolset.tool(title="Recall", mirror=mirrors.recall, links=_hit_links)
def recall(call: ToolCall, args: RecallArgs) -> RecallResult:
    """Find what is already known: decisions, gotchas, conventions, preferences, facts, open tasks and
    questions. Call it at the start of a task, and before writing a memory.

    Pass `query` and `project_hint` (the repository path or git remote): the hint also attaches this session
    to that project, so later writes go there. By default it searches the session's project plus the user's
    personal and core memories; `scopes: ["*"]` searches everything you can see.

    Each hit names its `scope`, `kind`, `rank` (2 a person wrote it, 1 an agent, 0 an automatic capture) and
    its author (`author_kind`, `agent_name`). `disputed: true` means an open review item questions it: rely on
    it with care. `stale_days` marks a core fact or reference past its freshness budget: verify it before
    relying on it (a person clears it by re-affirming the memory). Each hit also comes as a link to the resource zm://memory/{id}.
    """
    return recall_service(
        call.app,
        call.caller,
        args.query,
        scopes_arg=args.scopes,
        kinds=args.kinds,
        limit=args.limit,
        project_hint=args.project_hint,
        session_id=call.session(args.session_id),
    )


class IdArgs(ToolArgs):
    id: str = MemoryId


def _memory_links(result: GetMemoryResult) -> list[ResourceLink]:
    ids = [
        result.memory.id,
        *(lk.dst if lk.src == result.memory.id else lk.src for lk in result.links),
        *(entry.id for entry in result.history),
    ]
    return [memory_link(memory_id) for memory_id in dict.fromkeys(ids)]


class GetMemoryArgs(ToolArgs):
    id: str = MemoryId
    limit: int = Field(
        default=lifecycle.AUDIT_PAGE,
        ge=1,
        le=lifecycle.MAX_AUDIT_PAGE,
        description=f"Audit rows per page, newest first (1–{lifecycle.MAX_AUDIT_PAGE}).",
    )
    cursor: str | None = Field(
        default=None, max_length=40, description="next_cursor from the previous answer: the older audit rows."
    )


@toolset.tool(title="Get a memory", read_only=True, idempotent=True, mirror=mirrors.get_memory, links=_memory_links)
def get_memory(call: ToolCall, args: GetMemoryArgs) -> GetMemoryResult:
    """Read one memory whole: its row (status, why it was retired, its successor), its links, its version
    history (the memories it superseded), its audit trail (newest first, `limit` rows; `next_cursor` pages
    to older ones) and its open disputes. Check a memory this way before you update, forget or rely on it.
    An id you cannot see answers `not_found:`. The same JSON is the resource zm://memory/{id}.
    """
    return lifecycle.get_memory(call.app, call.caller, args.id, limit=args.limit, cursor=args.cursor)


class ForgetArgs(ToolArgs):
    id: str = MemoryId
    reason: str | None = Field(default=None, description="Why, in a few words (kept in the audit trail).")


@toolset.tool(title="Forget a memory", destructive=True, idempotent=True, mirror=mirrors.lifecycle)
def forget(call: ToolCall, args: ForgetArgs) -> LifecycleResult:
    """Retire a memory that is wrong or no longer useful: it stops appearing in recall. Nothing is deleted
    and `restore_memory` undoes it. To correct a memory, prefer `remember` with the corrected statement and
    a declared supersedes link. Forgetting a memory that is already retired changes nothing
    (`changed: false`).
    """
    return lifecycle.forget(call.app, call.caller, args.id, args.reason)


@toolset.tool(title="Restore a memory", idempotent=True, mirror=mirrors.lifecycle)
def restore_memory(call: ToolCall, args: IdArgs) -> LifecycleResult:
    """Undo the retirement of a memory, whatever retired it (forget, a supersede, a duplicate resolution,
    a closed loop, a merge): it is live again, and the supersedes links pointing at it are removed
    (`removed_links` names their sources). Restoring a live memory changes nothing.
    """
    return lifecycle.restore_memory(call.app, call.caller, args.id)


class CloseLoopArgs(ToolArgs):
    id: str = Field(description="The id of a task or open-question memory.")
    note: str | None = Field(default=None, description="How it ended, in a few words.")


@toolset.tool(title="Close a loop", idempotent=True, mirror=mirrors.lifecycle)
def close_loop(call: ToolCall, args: CloseLoopArgs) -> LifecycleResult:
    """Mark an open loop done: a `task` that is finished or an `open-question` that is answered. It stops
    appearing in recall; `restore_memory` reopens it. If the answer is worth keeping, `remember` it instead,
    declaring that it supersedes the question (that closes the loop too).
    """
    return lifecycle.close_loop(call.app, call.caller, args.id, args.note)


class MoveArgs(ToolArgs):
    ids: list[str] = Field(description="The memories to move (1–100).")
    scope: str | None = Field(
        default=None,
        description='The target: "core", "personal", a project slug or a scope path. Pass this or project_hint.',
    )
    project_hint: str | None = Field(
        default=None,
        description="The target project: a repository path, git remote URL or project name. Pass this or scope.",
    )


@toolset.tool(title="Move memories", idempotent=True, mirror=mirrors.move)
def move_memories(call: ToolCall, args: MoveArgs) -> MoveResult:
    """Move memories to another scope: the only way a memory changes scope. Pass `ids` and exactly one of
    `scope` or `project_hint`. Moving into a shared project shows the memories to its members. Returns
    `moved`, `unchanged` (already there) and `failed` (each with its reason); one failure does not stop the
    batch.
    """
    return lifecycle.move_memories(call.app, call.caller, args.ids, scope=args.scope, project_hint=args.project_hint)


class LinkArgs(ToolArgs):
    src: str = Field(description="The memory the relation starts from (one you can change).")
    dst: str = Field(description="The memory it points to (one you can see).")
    type: Literal["relates_to", "derived_from", "contradicts"] = Field(
        description="relates_to, derived_from (src was derived from dst) or contradicts (they disagree)."
    )


@toolset.tool(title="Link two memories", idempotent=True, mirror=mirrors.link)
def link(call: ToolCall, args: LinkArgs) -> LinkResult:
    """Relate two memories: `relates_to`, `derived_from` or `contradicts` (they disagree; hygiene can
    adjudicate). Linking twice changes nothing (`created: false`). To replace a memory, use `remember` with a
    supersedes link instead.
    """
    return lifecycle.link(call.app, call.caller, args.src, args.dst, args.type)
