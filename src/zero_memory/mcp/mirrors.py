"""The text mirror of each memory tool's result: what a client that reads only text shows the model.

Structured content carries every field; the mirror carries what an agent acts
on (ids, status, the memories' text, hints) in a few plain lines.
"""

from __future__ import annotations

from zero_memory.memory.models import (
    GetMemoryResult,
    LifecycleResult,
    LinkResult,
    MoveResult,
    RecallResult,
    RememberResult,
    SessionInfo,
)
from zero_memory.memory.views import preview


def _session(session: SessionInfo) -> str:
    if session.attached_project:
        return f"session attached to {session.attached_project}"
    return "session not attached to a project"


def remember(result: RememberResult) -> str:
    if result.status == "absorbed":
        lines = [f"absorbed: {result.id} in {result.scope} already says this; nothing new was written"]
    elif result.status == "yielded":
        lines = [
            f"yielded: {result.id} in {result.scope} (rank {result.rank}) already says this "
            "with more authority; nothing new was written"
        ]
    else:
        lines = [f"created {result.id} in {result.scope} (rank {result.rank})"]
    if result.routed_to_project:
        lines.append(f"routed to {result.routed_to_project.get('project')}: {result.routed_to_project.get('reason')}")
    if result.superseded:
        lines.append("superseded (retired): " + ", ".join(result.superseded))
    lines.extend(f"skipped link {s.type} -> {s.dst}: {s.reason}" for s in result.skipped_links)
    if result.similar_existing:
        lines.append("similar existing:")
        lines.extend(
            f"- {m.id} ({m.kind.value}, {m.scope}, similarity {m.similarity:.2f}): {m.preview}"
            for m in result.similar_existing
        )
    if result.hint:
        lines.append(f"hint: {result.hint}")
    if result.length_directive:
        lines.append(result.length_directive)
    lines.append(_session(result.session))
    return "\n".join(lines)


def recall(result: RecallResult) -> str:
    if not result.hits:
        return f"no memories found ({_session(result.session)})"
    lines = [f"{len(result.hits)} memor{'y' if len(result.hits) == 1 else 'ies'} ({_session(result.session)}):"]
    for number, hit in enumerate(result.hits, 1):
        flags = [f"rank {hit.rank}", f"{hit.author_kind} {hit.agent_name}", f"{hit.age_days:.0f}d old"]
        if hit.disputed:
            flags.append("DISPUTED")
        if hit.stale_days is not None:
            flags.append(f"stale {hit.stale_days}d: verify")
        lines.append(f"[{number}] {hit.id} · {hit.kind.value} · {hit.scope} · {' · '.join(flags)}")
        lines.append("    " + hit.content.replace("\n", "\n    "))
    return "\n".join(lines)


def get_memory(result: GetMemoryResult) -> str:
    m = result.memory
    state = m.status if m.status == "live" else f"{m.status} ({m.invalidated_reason})"
    if m.superseded_by:
        state += f", superseded by {m.superseded_by}"
    lines = [
        f"{m.id} · {m.kind.value} · {m.scope} · rank {m.rank} · {state}" + (" · DISPUTED" if m.disputed else ""),
        f"written by {m.author_kind} {m.agent_name} at {m.created_at}",
        m.content,
    ]
    for lk in result.links:
        lines.append(f"link: {lk.src} {lk.type} {lk.dst}")
    for entry in result.history:
        lines.append(f"history (depth {entry.depth}): {entry.id} {entry.status}: {preview(entry.content)}")
    for dispute in result.disputes:
        lines.append(f"open dispute {dispute.id}: {dispute.verdict} ({dispute.shape})")
    more = f"; older: cursor {result.next_cursor}" if result.next_cursor else ""
    lines.append(f"audit trail: {len(result.audit)} entries, newest first{more}")
    return "\n".join(lines)


def lifecycle(result: LifecycleResult) -> str:
    state = result.status if result.invalidated_reason is None else f"{result.status} ({result.invalidated_reason})"
    text = f"{result.id}: {state}" if result.changed else f"{result.id}: already {state}; nothing changed"
    if result.removed_links:
        text += "; removed supersedes links from " + ", ".join(result.removed_links)
    return text


def move(result: MoveResult) -> str:
    parts = [f"moved {len(result.moved)} to {result.scope}" + (": " + ", ".join(result.moved) if result.moved else "")]
    if result.unchanged:
        parts.append("already there: " + ", ".join(result.unchanged))
    parts.extend(f"failed {f.id}: {f.error}" for f in result.failed)
    return "\n".join(parts)


def link(result: LinkResult) -> str:
    verb = "linked" if result.created else "already linked"
    return f"{verb}: {result.src} {result.type} {result.dst}"
