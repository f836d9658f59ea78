"""State transitions: every change of a memory's or a queue row's state, each with its audit row.

Each function runs inside the caller's write transaction and does one whole,
reversible step: the state change, the link it implies, and the audit row that
lets anyone find it from its memory and undo it. The write path, the hygiene
passes and the review queue all change state through here, so a transition
and its audit row are written once.

| transition | undone by |
| --- | --- |
| ``create`` (a memory composed by a merge) | forgetting it, and ``restore`` of what it superseded |
| ``retire`` (supersede, duplicate, forget, merge, retire, close a loop) | ``restore`` |
| ``move`` | ``move`` back (the original scope stays on record) |
| ``link`` | removing the link (``zm hygiene undo`` for a run's links) |
| ``raise_dispute`` | settling the row (``resolve_dispute``) or ``dismiss`` |
| ``resolve_dispute`` | restoring what the settlement invalidated (the row stays settled) |
| ``pin`` | ``unpin`` |
| ``escalate`` (a challenged row becomes a stale suspect) | settling the row |
| ``start_run``, ``finish_run`` (the run an automatic action names) | nothing: ``zm hygiene undo`` undoes its actions |
| ``undo_links`` (the links a run added, as its undo ends) | nothing: the undo's audit row names the run |
| ``propose_portability`` (a pending proposal, or a closed candidacy) | dismissing the proposal |
| ``settle_portability`` (approve: ``move`` to core; or dismiss) | ``move`` back |
| ``challenge`` (one session's signal on the row it raised or joined) | settling the row |
| ``reaffirm`` (a core fact's freshness budget starts again) | nothing: its budget runs down again |
| ``follow_anchor``, ``accept_anchors`` (an anchor re-pointed at the code) | ``zm hygiene undo`` puts it back |
| ``examine``, ``cap_stop`` (a subject the re-examination saw whole, or stopped at) | nothing: a stamp |
| ``remember_existing`` (a write absorbed by, or yielding to, a memory) | nothing: no state changed |

The guard: automation never retires a restored or disputed memory
(``domain.memory.retirable_by_automation``). Every automatic retirement goes
through ``retire_automatically`` or ``close_loop_automatically`` (or asks
``hold`` first, when it must know before it opens a run), and ``hold`` turns
the held-back retirement into the queue row the caller prepared, so a person
decides. A person's or an agent's ``retire`` is never held.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from zero_memory.domain.anchors import AnchorRecord
from zero_memory.domain.memory import InvalidationReason, Memory, Status, retirable_by_automation
from zero_memory.domain.records import Dispute, DisputeStatus, Link, PortabilityCandidate, Run, RunStatus
from zero_memory.ids import new_id
from zero_memory.store.base import Tx


@dataclass(frozen=True, slots=True)
class Queued:
    """The review-queue row an automatic retirement becomes when the guard holds it back."""

    dispute: Dispute
    payload: Mapping[str, object] = field(default_factory=dict)
    contradicts: bool = False


def create(
    tx: Tx,
    memory: Memory,
    vector: np.ndarray,
    model: str,
    *,
    actor: str,
    action: str,
    at: datetime,
    payload: Mapping[str, object] | None = None,
    related: Sequence[str] = (),
) -> None:
    """Insert a new memory with its vector, and the audit row that created it (the new id first, then ``related``)."""
    tx.insert_memory(memory, vector, model)
    tx.add_audit(
        actor=actor,
        action=action,
        owner=memory.owner,
        memory_ids=[memory.id, *related],
        payload=dict(payload or {}),
        run_id=None,
        at=at,
    )


def retire(
    tx: Tx,
    old: Memory,
    *,
    successor: str | None,
    reason: InvalidationReason,
    actor: str,
    action: str,
    at: datetime,
    payload: Mapping[str, object] | None = None,
    run_id: str | None = None,
) -> None:
    """Invalidate a memory, link its successor, and audit it: one reversible step."""
    tx.set_status(old.id, Status.INVALIDATED, reason, successor, at)
    if successor is not None:
        tx.add_link(Link(new_id("lnk"), successor, old.id, "supersedes", at, actor, run_id))
    ids = [old.id] if successor is None else [successor, old.id]
    tx.add_audit(
        actor=actor,
        action=action,
        owner=old.owner,
        memory_ids=ids,
        payload={"reason": reason.value, "successor": successor, **(payload or {})},
        run_id=run_id,
        at=at,
    )


def close_loop(
    tx: Tx,
    loop: Memory,
    *,
    actor: str,
    at: datetime,
    note: str | None = None,
    run_id: str | None = None,
    evidence: Memory | None = None,
    payload: Mapping[str, object] | None = None,
) -> None:
    """Close an open task or question: an invalidation with reason ``closed``, reopened by ``restore``.

    ``evidence`` (the loop-closure stage): the memory that shows it closed, linked ``relates_to`` the loop
    in the same run, so undoing the run removes the link with the closure.
    """
    retire(
        tx,
        loop,
        successor=None,
        reason=InvalidationReason.CLOSED,
        actor=actor,
        action="close_loop",
        at=at,
        payload={
            **({"note": note} if note else {}),
            **({"evidence": evidence.id} if evidence else {}),
            **(payload or {}),
        }
        or None,
        run_id=run_id,
    )
    if evidence is not None:
        link(tx, evidence, loop, "relates_to", actor=actor, at=at, action="loop_closure.link", run_id=run_id)


def close_loop_automatically(
    tx: Tx,
    loop: Memory,
    *,
    actor: str,
    at: datetime,
    evidence: Memory,
    run_id: str | None,
    payload: Mapping[str, object] | None = None,
) -> bool:
    """``close_loop`` by the loop-closure stage: False when the guard holds it back. Nothing is queued: the
    loop stays open, as whoever reopened it (or the person deciding its row) left it."""
    if hold(tx, loop, None, actor=actor, at=at):
        return False
    close_loop(tx, loop, actor=actor, at=at, run_id=run_id, evidence=evidence, payload=payload)
    return True


def restore(
    tx: Tx,
    memory: Memory,
    *,
    actor: str,
    at: datetime,
    run_id: str | None = None,
    payload: Mapping[str, object] | None = None,
) -> list[str]:
    """Clear an invalidation and the supersede links pointing at it; return the removed links' sources.

    The memory is marked restored for good: someone (a person, an agent, an undo) judged its
    invalidation false, so automation may queue it from now on but never invalidate it again.
    """
    tx.set_status(memory.id, Status.LIVE, None, None, at)
    tx.mark_restored(memory.id, at)
    removed = tx.remove_links(dst=memory.id, link_type="supersedes", at=at)
    tx.add_audit(
        actor=actor,
        action="restore",
        owner=memory.owner,
        memory_ids=[memory.id],
        payload={
            "was": memory.invalidated_reason.value if memory.invalidated_reason else None,
            "superseded_by": memory.superseded_by,
            "removed_links": [link.src for link in removed],
            **(payload or {}),
        },
        run_id=run_id,
        at=at,
    )
    return [link.src for link in removed]


def move(
    tx: Tx, memory: Memory, target: str, *, actor: str, at: datetime, payload: Mapping[str, object] | None = None
) -> None:
    """Give a memory another scope; its first scope stays on record as ``original_scope``."""
    tx.set_scope(memory.id, target, memory.original_scope or memory.scope, at)
    tx.add_audit(
        actor=actor,
        action="move",
        owner=memory.owner,
        memory_ids=[memory.id],
        payload={"from": memory.scope, "to": target, **(payload or {})},
        run_id=None,
        at=at,
    )


def link(
    tx: Tx,
    src: Memory,
    dst: Memory,
    link_type: str,
    *,
    actor: str,
    at: datetime,
    action: str = "link",
    payload: Mapping[str, object] | None = None,
    run_id: str | None = None,
) -> bool:
    """Add a link between two memories unless it exists; False when it did."""
    if tx.has_link(src.id, dst.id, link_type):
        return False
    tx.add_link(Link(new_id("lnk"), src.id, dst.id, link_type, at, actor, run_id))
    tx.add_audit(
        actor=actor,
        action=action,
        owner=src.owner,
        memory_ids=[src.id, dst.id],
        payload={"type": link_type, **(payload or {})},
        run_id=run_id,
        at=at,
    )
    return True


def raise_dispute(
    tx: Tx,
    dispute: Dispute,
    *,
    actor: str,
    at: datetime,
    payload: Mapping[str, object] | None = None,
    contradicts: bool = False,
) -> tuple[Dispute, bool]:
    """File a review-queue row with its audit row; ``(the row, True)``, or the pair's existing row and False.

    ``contradicts``: the row is a contradiction, and a raised row links its sides ``contradicts`` (B to A,
    in the row's run) unless they are linked so already; the row's audit row covers the link.
    """
    if not tx.add_dispute(dispute):
        existing = tx.dispute_for_pair(dispute.pair_key) if dispute.pair_key else None
        return existing or dispute, False
    ids = [dispute.memory_a] + ([dispute.memory_b] if dispute.memory_b else [])
    tx.add_audit(
        actor=actor,
        action="queue.raise",
        owner=dispute.owner,
        memory_ids=ids,
        payload={"dispute_id": dispute.id, "verdict": dispute.verdict, **(payload or {})},
        run_id=dispute.run_id,
        at=at,
    )
    b = dispute.memory_b
    if contradicts and b is not None and not tx.has_link(dispute.memory_a, b, "contradicts"):
        tx.add_link(Link(new_id("lnk"), b, dispute.memory_a, "contradicts", at, actor, dispute.run_id))
    return dispute, True


def hold(tx: Tx, memory: Memory, queued: Queued | None, *, actor: str, at: datetime) -> bool:
    """The guard of every automatic retirement: True when automation may not retire ``memory`` (restored, or
    with a pending row), and then ``queued`` is raised instead (None: nothing to ask, the memory stays)."""
    if retirable_by_automation(memory.restored, bool(tx.open_disputes_for([memory.id]))):
        return False
    if queued is not None:
        raise_dispute(tx, queued.dispute, actor=actor, at=at, payload=queued.payload, contradicts=queued.contradicts)
    return True


def retire_automatically(
    tx: Tx,
    old: Memory,
    *,
    queued: Queued,
    successor: str | None,
    reason: InvalidationReason,
    actor: str,
    action: str,
    at: datetime,
    payload: Mapping[str, object] | None = None,
    run_id: str | None = None,
) -> bool:
    """``retire`` by automation (a hygiene pass, a refinement, a verification): True when retired, False when
    the guard held it back and ``queued`` joined the review queue instead."""
    if hold(tx, old, queued, actor=actor, at=at):
        return False
    retire(
        tx, old, successor=successor, reason=reason, actor=actor, action=action, at=at, payload=payload, run_id=run_id
    )
    return True


def resolve_dispute(
    tx: Tx,
    dispute: Dispute,
    resolution: Mapping[str, object],
    *,
    actor: str,
    at: datetime,
    payload: Mapping[str, object] | None = None,
) -> bool:
    """Settle a pending row as a person or an agent decided, with its audit row (``payload`` adds to it,
    e.g. who settled); False (and no row) if it was settled."""
    if not tx.settle_dispute(dispute.id, DisputeStatus.RESOLVED, dict(resolution), actor, at):
        return False
    ids = [dispute.memory_a] + ([dispute.memory_b] if dispute.memory_b else [])
    tx.add_audit(
        actor=actor,
        action="queue.resolve",
        owner=dispute.owner,
        memory_ids=ids,
        payload={"dispute_id": dispute.id, "verdict": dispute.verdict, **resolution, **(payload or {})},
        run_id=None,
        at=at,
    )
    return True


def escalate(
    tx: Tx,
    dispute: Dispute,
    verdict: str,
    *,
    actor: str,
    at: datetime,
    run_id: str | None,
    payload: Mapping[str, object] | None = None,
) -> bool:
    """Give a pending row a graver verdict in place (a challenge that became a stale suspect): the same row,
    never a second one; False when it was settled or changed meanwhile."""
    if not tx.escalate_dispute(dispute.id, dispute.verdict, verdict, run_id):
        return False
    ids = [dispute.memory_a] + ([dispute.memory_b] if dispute.memory_b else [])
    tx.add_audit(
        actor=actor,
        action="queue.escalate",
        owner=dispute.owner,
        memory_ids=ids,
        payload={"dispute_id": dispute.id, "from": dispute.verdict, "verdict": verdict, **(payload or {})},
        run_id=run_id,
        at=at,
    )
    return True


def dismiss(
    tx: Tx, dispute: Dispute, *, actor: str, at: datetime, why: Mapping[str, object], run_id: str | None
) -> bool:
    """Settle a pending row as keep-both without touching a memory (self-healing); False if it was settled."""
    if not tx.settle_dispute(dispute.id, DisputeStatus.DISMISSED, {"keep_both": True, **why}, actor, at):
        return False
    ids = [dispute.memory_a] + ([dispute.memory_b] if dispute.memory_b else [])
    tx.add_audit(
        actor=actor,
        action="queue.dismiss",
        owner=dispute.owner,
        memory_ids=ids,
        payload={"dispute_id": dispute.id, **why},
        run_id=run_id,
        at=at,
    )
    return True


def pin(tx: Tx, memory: Memory, *, actor: str, at: datetime) -> bool:
    """Make a memory a standing rule that leads every briefing; False when it was pinned already."""
    if not tx.add_pin(memory.id, actor, at):
        return False
    tx.add_audit(actor=actor, action="pin", owner=memory.owner, memory_ids=[memory.id], payload={}, run_id=None, at=at)
    return True


def unpin(tx: Tx, memory: Memory, *, actor: str, at: datetime) -> bool:
    """Take a memory out of the standing rules; False when it was not pinned."""
    if not tx.remove_pin(memory.id):
        return False
    tx.add_audit(
        actor=actor, action="unpin", owner=memory.owner, memory_ids=[memory.id], payload={}, run_id=None, at=at
    )
    return True


def start_run(tx: Tx, run: Run, *, at: datetime) -> bool:
    """Claim a run and audit its start; False when someone claimed its id already."""
    if not tx.claim_run(run):
        return False
    tx.add_audit(
        actor=f"hygiene.{run.kind}",
        action="run.start",
        owner=run.owner,
        memory_ids=[],
        payload={"started_by": run.started_by, "dry_run": run.dry_run},
        run_id=run.id,
        at=at,
    )
    return True


def finish_run(tx: Tx, run: Run, status: RunStatus, summary: Mapping[str, Any], *, at: datetime) -> None:
    """Record how a run ended, with its summary, and audit its stop (the counts that are not zero)."""
    tx.finish_run(run.id, status, dict(summary), at)
    tx.add_audit(
        actor=f"hygiene.{run.kind}",
        action="run.stop",
        owner=run.owner,
        memory_ids=[],
        payload={"status": status.value, **{k: v for k, v in summary.items() if v}},
        run_id=run.id,
        at=at,
    )


def undo_links(tx: Tx, run: Run, *, actor: str, at: datetime, restored: Sequence[str], anchors_moved_back: int) -> int:
    """End an undo of a run: remove the ``relates_to`` links the run added, and audit the whole undo (what
    ``restore`` brought back, the links removed, the anchors put back); the number of links removed."""
    links = [lk for lk in tx.links_of_run(run.id) if lk.type == "relates_to"]
    for lk in links:
        tx.remove_link(lk.id, at)
    tx.add_audit(
        actor=actor,
        action="run.undo",
        owner=run.owner,
        memory_ids=list(restored),
        payload={"restored": len(restored), "unlinked": len(links), "anchors_moved_back": anchors_moved_back},
        run_id=run.id,
        at=at,
    )
    return len(links)


def propose_portability(
    tx: Tx, candidate: PortabilityCandidate, *, portable: bool, actor: str = "hygiene.portability"
) -> bool:
    """File a portability candidacy (pending: a proposal to move the memory to core; closed: never asked
    again) with its audit row; False when the memory was a candidate already."""
    if not tx.add_portability(candidate):
        return False
    tx.add_audit(
        actor=actor,
        action="portability.propose" if candidate.status == "pending" else "portability.close",
        owner=candidate.owner,
        memory_ids=[candidate.memory_id],
        payload={
            "candidate_id": candidate.id,
            "confidence": candidate.confidence,
            "rationale": candidate.rationale,
            "portable": portable,
        },
        run_id=candidate.run_id,
        at=candidate.created_at,
    )
    return True


def settle_portability(
    tx: Tx, candidate: PortabilityCandidate, memory: Memory, *, target: str | None, actor: str, at: datetime
) -> None:
    """Settle a pending proposal as its owner decided: approved (``target``: the memory ``move``s there) or
    dismissed (None), with its audit row."""
    if target is not None:
        move(tx, memory, target, actor=actor, at=at, payload={"portability": candidate.id})
    tx.settle_portability(candidate.id, "approved" if target is not None else "dismissed", actor, at)
    tx.add_audit(
        actor=actor,
        action="portability.approve" if target is not None else "portability.dismiss",
        owner=memory.owner,
        memory_ids=[memory.id],
        payload={"candidate_id": candidate.id},
        run_id=None,
        at=at,
    )


CHALLENGE = "challenge"  # the audit action of one session's challenge
REAFFIRM = "reaffirm"  # the audit action of a person vouching for a core fact


def challenge(
    tx: Tx, memory: Memory, dispute_id: str, *, actor: str, at: datetime, payload: Mapping[str, object]
) -> None:
    """One session's challenge of a memory, recorded on the row it raised or joined (``dispute_id``)."""
    tx.add_audit(
        actor=actor,
        action=CHALLENGE,
        owner=memory.owner,
        memory_ids=[memory.id],
        payload={**payload, "dispute_id": dispute_id},
        run_id=None,
        at=at,
    )


def reaffirm(tx: Tx, memory: Memory, *, actor: str, at: datetime, payload: Mapping[str, object]) -> None:
    """A person vouches that a core fact or reference still holds: its freshness budget starts again at ``at``."""
    tx.add_audit(
        actor=actor,
        action=REAFFIRM,
        owner=memory.owner,
        memory_ids=[memory.id],
        payload=dict(payload),
        run_id=None,
        at=at,
    )


def remember_existing(
    tx: Tx, kept: Memory, status: str, *, actor: str, at: datetime, payload: Mapping[str, object]
) -> None:
    """A write that stored nothing new: ``status`` is ``absorbed`` (``kept`` says it already) or ``yielded``
    (``kept`` outranks it); the audit row on the memory kept is the whole step."""
    tx.add_audit(
        actor=actor,
        action=f"remember.{status}",
        owner=actor,
        memory_ids=[kept.id],
        payload=dict(payload),
        run_id=None,
        at=at,
    )


def follow_anchor(
    tx: Tx,
    before: AnchorRecord,
    after: AnchorRecord,
    *,
    owner: str,
    actor: str,
    action: str,
    at: datetime,
    payload: Mapping[str, object],
    run_id: str | None,
) -> bool:
    """Re-point an anchor at where its code is now, with an audit row that keeps where it was (``payload``);
    False (and no row) when the anchor is gone meanwhile."""
    if not tx.update_anchor(before, after):
        return False
    tx.add_audit(
        actor=actor,
        action=action,
        owner=owner,
        memory_ids=[before.memory_id],
        payload=dict(payload),
        run_id=run_id,
        at=at,
    )
    return True


def accept_anchors(
    tx: Tx,
    memory_id: str,
    kept: Sequence[AnchorRecord],
    before: Sequence[Mapping[str, object]],
    *,
    owner: str,
    actor: str,
    at: datetime,
) -> None:
    """A person upheld a memory over its ``outdated`` row: its anchors become ``kept`` (re-anchored, the gone
    ones let go), with one ``anchor.accept`` audit row keeping what each was ``before``."""
    tx.set_anchors(memory_id, kept, at)
    tx.add_audit(
        actor=actor,
        action="anchor.accept",
        owner=owner,
        memory_ids=[memory_id],
        payload={"anchors": [dict(b) for b in before]},
        run_id=None,
        at=at,
    )


def examine(
    tx: Tx, subject: Memory, *, owner: str, model: str, at: datetime, run_id: str | None, payload: Mapping[str, object]
) -> None:
    """Stamp a subject the re-examination's model has seen whole, with its ``rescan.examine`` audit row."""
    tx.add_guard(subject.id, model, "complete", at)
    tx.add_audit(
        actor="hygiene.rescan",
        action="rescan.examine",
        owner=owner,
        memory_ids=[subject.id],
        payload={"model": model, **payload},
        run_id=run_id,
        at=at,
    )


def cap_stop(
    tx: Tx, subject: Memory, *, owner: str, at: datetime, run_id: str | None, payload: Mapping[str, object]
) -> None:
    """The re-examination stopped at its cap on ``subject``: the audit row says so (the subject stays unstamped)."""
    tx.add_audit(
        actor="hygiene.rescan",
        action="rescan.cap_stop",
        owner=owner,
        memory_ids=[subject.id],
        payload=dict(payload),
        run_id=run_id,
        at=at,
    )
