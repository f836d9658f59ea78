"""The hygiene and conflict tools: scan, read and settle the review queue, challenge, portability.

Thin: each parses its arguments, calls one service function and returns its model.
"""

from __future__ import annotations

from typing import Literal, TypeVar

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field

from zero_memory.conflicts import bulk, queue, resolve
from zero_memory.conflicts import challenge as challenge_service
from zero_memory.conflicts.choice import choice_of
from zero_memory.conflicts.models import (
    BulkItem,
    BulkResult,
    ChallengeResult,
    Conflict,
    ConflictList,
    Policy,
    Resolution,
)
from zero_memory.hygiene import portability
from zero_memory.hygiene.on_demand import ScanResult
from zero_memory.hygiene.on_demand import scan_hygiene as scan_service
from zero_memory.mcp.tooling import ToolArgs, ToolCall, Toolset
from zero_memory.memory.models import SessionInfo
from zero_memory.memory.targets import attached_project

toolset = Toolset()
A = TypeVar("A", bound=BaseModel)

DisputeId = Field(description="A dispute id (dsp_…), as list_conflicts returned it.", max_length=100)
SessionId = Field(default=None, max_length=500, description="Your conversation id, if you have one.")


# The hygiene and conflict tools answer with the session too (docs/spec/tools.md), as remember and recall do.
class ConflictListAnswer(ConflictList):
    session: SessionInfo


class ConflictAnswer(Conflict):
    session: SessionInfo


class ResolutionAnswer(Resolution):
    session: SessionInfo


class BulkAnswer(BulkResult):
    session: SessionInfo


class ProposalListAnswer(portability.ProposalList):
    session: SessionInfo


class PortabilityAnswer(portability.PortabilityResolution):
    session: SessionInfo


def _with_session(answer: type[A], result: BaseModel, session: SessionInfo) -> A:
    return answer.model_validate({**result.model_dump(), "session": session})


def _session(call: ToolCall, session_id: str | None) -> SessionInfo:
    sid = call.session(session_id)
    attached = attached_project(call.app.store, call.caller.uid, sid) if sid else None
    return SessionInfo(attached_project=attached, session_id=sid)


class ScanArgs(ToolArgs):
    rejudge: bool = Field(
        default=False,
        description="Also re-judge pending pairs with the current judge and "
        "dismiss those it now finds complementary or unrelated (after a judge upgrade).",
    )
    dry_run: bool = Field(default=False, description="Report what the cycle would do and change nothing.")
    wait: bool = Field(default=False, description="Return when the cycle has finished, with its counts.")
    session_id: str | None = SessionId


def _scan_mirror(result: ScanResult) -> str:
    if result.status == "running":
        return f"hygiene run {result.run_id} started; call scan_hygiene with wait: true to get its counts"
    counts = ", ".join(
        f"{k} {v}"
        for k, v in result.model_dump(exclude_none=True).items()
        if isinstance(v, int) and not isinstance(v, bool) and v
    )
    dry = " (dry run)" if result.dry_run else ""
    return f"hygiene run {result.run_id} {result.status}{dry}: {counts or 'nothing to do'}"


# Destructive: a cycle may invalidate memories automatically (each reversible by undoing its run).
@toolset.tool(title="Scan hygiene", destructive=True, mirror=_scan_mirror)
def scan_hygiene(call: ToolCall, args: ScanArgs) -> ScanResult:
    """Run one full hygiene cycle over your memories: find duplicates, superseded and contradictory pairs,
    resolve the obvious ones (reversibly) and queue the debatable ones for review; also sweep moot queue
    rows, re-examine heavily used memories, and propose portable facts.

    Returns {run_id, status} at once; with wait: true it returns when the run ends, with its counts
    (subjects, pairs_considered, judged, auto_resolved, queued, …). Every automatic action can be undone
    (restore_memory, or `zm hygiene undo RUN_ID`). Then read the queue with list_conflicts.
    """
    return scan_service(
        call.app,
        call.caller,
        rejudge=args.rejudge,
        dry_run=args.dry_run,
        wait=args.wait,
        session=_session(call, args.session_id),
    )


class ListConflictsArgs(ToolArgs):
    status: Literal["pending", "resolved", "dismissed"] | None = Field(
        default="pending", description="Which rows: pending (default), resolved or dismissed."
    )
    verdict: str | None = Field(
        default=None,
        description="Only this verdict: duplicate, supersedes, "
        "contradiction, unjudged, challenged, stale_suspect, outdated.",
    )
    shape: Literal["pair", "single"] | None = Field(default=None, description="pair rows or single-subject rows.")
    limit: int = Field(default=20, ge=1, le=100, description="At most this many rows (1–100).")
    cursor: str | None = Field(default=None, description="next_cursor from the previous page.")
    session_id: str | None = SessionId


def _conflicts_mirror(result: ConflictListAnswer) -> str:
    lines = [f"{result.pending_count} pending"]
    for row in result.conflicts:
        verdict = row.direction or row.verdict
        lines.append(
            f"{row.id} {row.shape} {verdict}" + (f" ({row.confidence:.2f})" if row.confidence is not None else "")
        )
        if row.proposal:
            lines.append(f"  proposes: {row.proposal.winner} stays, {row.proposal.loser} retired")
        lines.append(f"  A {row.memory_a.id}: {row.memory_a.content[:200]}")
        if row.memory_b:
            lines.append(f"  B {row.memory_b.id}: {row.memory_b.content[:200]}")
    if result.next_cursor:
        lines.append(f"more: cursor {result.next_cursor}")
    return "\n".join(lines)


@toolset.tool(title="List conflicts", read_only=True, idempotent=True, mirror=_conflicts_mirror)
def list_conflicts(call: ToolCall, args: ListConflictsArgs) -> ConflictListAnswer:
    """The review queue: pairs the judge could not settle (duplicate, supersedes with its direction,
    contradiction, or unjudged when no judge is configured) and single-subject disputes (challenged,
    stale_suspect). Each row shows both memories inline; confidence and rationale are null for unjudged rows.
    A row the retro pass queued carries `proposal` when the pass would have resolved it automatically: the
    `winner` that would stay and the `loser` it would invalidate; resolve_conflict with accept: true does it.
    Settle rows with resolve_conflict, or many at once with resolve_conflicts.
    """
    listed = queue.list_conflicts(
        call.app,
        call.caller,
        status=args.status,
        verdict=args.verdict,
        shape=args.shape,
        limit=args.limit,
        cursor=args.cursor,
    )
    return _with_session(ConflictListAnswer, listed, _session(call, args.session_id))


class GetConflictArgs(ToolArgs):
    id: str = DisputeId
    session_id: str | None = SessionId


@toolset.tool(title="Get conflict", read_only=True, idempotent=True)
def get_conflict(call: ToolCall, args: GetConflictArgs) -> ConflictAnswer:
    """One review-queue row with both memories, the verdict, confidence and rationale."""
    conflict = queue.get_conflict(call.app, call.caller, args.id)
    return _with_session(ConflictAnswer, conflict, _session(call, args.session_id))


class ResolveArgs(ToolArgs):
    dispute_id: str = DisputeId
    keep_both: bool | None = Field(default=None, description="Both memories stay (also: uphold a challenged one).")
    winner: str | None = Field(
        default=None, description="The id that stays; the other is invalidated, superseded by it (reversible)."
    )
    forget: str | None = Field(default=None, description="The id to forget; the other stays.")
    merge: str | None = Field(default=None, description="The composed text of a new memory that supersedes both.")
    retire: bool | None = Field(
        default=None, description="Single-subject rows only: invalidate the memory (reversible, no successor)."
    )
    accept: bool | None = Field(
        default=None,
        description="Carry out the row's proposal (a retro row's `proposal`: its winner stays, its loser is "
        "invalidated, reversibly). Refused on a row without a proposal.",
    )
    session_id: str | None = SessionId


@toolset.tool(title="Resolve conflict", destructive=True, mirror=lambda r: f"{r.dispute_id} resolved: {r.resolution}")
def resolve_conflict(call: ToolCall, args: ResolveArgs) -> ResolutionAnswer:
    """Settle one review-queue row with exactly one choice: keep_both, winner, forget, merge, accept (a row
    with a `proposal`), or (single-subject rows) retire. Everything it invalidates is restorable with
    restore_memory. A row that is no longer pending answers `conflict: already_resolved:`.
    """
    choice = choice_of(
        keep_both=args.keep_both,
        winner=args.winner,
        forget=args.forget,
        merge=args.merge,
        retire=args.retire,
        accept=args.accept,
    )
    resolution = resolve.resolve_conflict(call.app, call.caller, args.dispute_id, choice)
    return _with_session(ResolutionAnswer, resolution, _session(call, args.session_id))


class ResolveManyArgs(ToolArgs):
    policy: Policy | None = Field(
        default=None,
        description='{"name": "newest_wins" | "oldest_wins" | '
        '"keep_both", "verdict"?: "<only this verdict>"} over pending pair rows.',
    )
    resolutions: list[BulkItem] | None = Field(
        default=None, description='Up to 100 items {"dispute_id", "winner"?, "retire"?}; neither means keep both.'
    )
    session_id: str | None = SessionId


@toolset.tool(
    title="Resolve conflicts",
    destructive=True,
    mirror=lambda r: f"resolved {len(r.resolved)}, skipped {len(r.skipped)}, failed {len(r.failed)}",
)
def resolve_conflicts(call: ToolCall, args: ResolveManyArgs) -> BulkAnswer:
    """Settle many rows in one call: a policy over pending pair rows (single-subject rows are skipped, so a
    policy never retires a memory on its own), or an explicit list of up to 100 decisions. Failed items come
    back in failed[] and the rest still apply. Pass policy or resolutions, not both.
    """
    result = bulk.resolve_conflicts(call.app, call.caller, policy=args.policy, resolutions=args.resolutions)
    return _with_session(BulkAnswer, result, _session(call, args.session_id))


class ChallengeArgs(ToolArgs):
    memory_id: str = Field(description="The memory you found wrong or outdated.", max_length=100)
    reason: str = Field(description="What you observed that contradicts it, in a sentence or two.")
    session_id: str | None = SessionId


@toolset.tool(
    title="Challenge a memory",
    idempotent=True,
    mirror=lambda r: f"dispute {r.dispute_id} {'raised' if r.created else 'already open'}",
)
def challenge(call: ToolCall, args: ChallengeArgs) -> ChallengeResult:
    """Say that a memory misled you: it is wrong or outdated against the world (not against another memory).
    Raises a challenged dispute for a person to settle; while it is open the memory ranks lower in recall.
    While one is open, the same dispute_id comes back with created: false, and a challenge from another
    session is recorded on it: a memory that misled two sessions becomes a stale suspect for a person.
    """
    session = call.session(args.session_id)
    return challenge_service.challenge(call.app, call.caller, args.memory_id, args.reason, session_id=session)


class ListPortabilityArgs(ToolArgs):
    status: Literal["pending", "approved", "dismissed", "closed"] | None = Field(
        default="pending", description="Which proposals (default pending)."
    )
    session_id: str | None = SessionId


@toolset.tool(title="List portability proposals", read_only=True, idempotent=True)
def list_portability(call: ToolCall, args: ListPortabilityArgs) -> ProposalListAnswer:
    """Project memories the judge found true outside their project, proposed for your personal core scope
    (visible from every project). Approve or dismiss each with resolve_portability.
    """
    listed = portability.list_portability(call.app, call.caller, args.status)
    return _with_session(ProposalListAnswer, listed, _session(call, args.session_id))


class ResolvePortabilityArgs(ToolArgs):
    candidate_id: str = Field(description="A proposal id (prt_…).", max_length=100)
    approve: bool = Field(
        description="true moves the memory to your core scope (reversible with "
        "move_memories); false dismisses the proposal for good."
    )
    session_id: str | None = SessionId


@toolset.tool(title="Resolve portability proposal", destructive=False)
def resolve_portability(call: ToolCall, args: ResolvePortabilityArgs) -> PortabilityAnswer:
    """Approve (move to user.<you>.core, original scope kept on record) or dismiss (never proposed again).
    An approval that would take the memory from other people who read it (a team scope, or a project with
    other members) is refused with conflict: and changes nothing; dismiss such a proposal.
    """
    resolved = portability.resolve_portability(call.app, call.caller, args.candidate_id, args.approve)
    return _with_session(PortabilityAnswer, resolved, _session(call, args.session_id))


TRIAGE = """Triage the zero-memory review queue{scope}.

1. Call list_conflicts (pending rows, limit 100; follow next_cursor until done).
2. Decide each pair with these rules, in order:
   - a side marked restored: true was once restored after a false invalidation: it is always kept
     (keep both, or it wins);
   - a completion report beats the plan or brief for the same work (the report wins);
   - the newer checkpoint of one rollout beats the older (a shared branch or commit identifies one rollout);
   - a verified fix beats a draft diagnosis of the same problem (the fix wins);
   - a general rule and its specific application are both kept (keep both);
   - two statements that are both still true are both kept; only a real replacement picks a winner.
   When unsure, keep both. Use get_memory on a side when you need its history or audit trail.
3. Leave single-subject rows (challenged, stale_suspect) for a person unless you verified the memory
   against the code or the world; then uphold (omit winner) or retire it.
4. Submit every decision in ONE resolve_conflicts call with resolutions: [{{"dispute_id", "winner"?,
   "retire"?}}] (at most 100 per call; repeat for the rest), then report what you decided and why.
"""


def register(server: MCPServer) -> None:
    @server.prompt(
        name="triage",
        title="Triage the review queue",
        description="Walk the pending review queue, apply the triage rules, and settle it in one "
        "resolve_conflicts call.",
    )
    def triage(verdict: str | None = None) -> str:
        scope = f" (only rows with verdict {verdict})" if verdict else ""
        return TRIAGE.format(scope=scope)
