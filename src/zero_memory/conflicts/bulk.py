"""Settling many disputes in one call: a policy, or an explicit list of up to 100.

A policy (``newest_wins``, ``oldest_wins``, ``keep_both``, optionally limited
to one verdict) covers pending pair rows only: single-subject rows are
skipped, so a policy can never retire a memory on its own. An explicit list
settles each item as ``winner``, ``retire`` or (neither) keep both; a failing
item lands in ``failed`` and the rest still apply.
"""

from __future__ import annotations

from zero_memory import errors
from zero_memory.access.caller import Caller
from zero_memory.access.visibility import visibility
from zero_memory.app import App
from zero_memory.conflicts.choice import Choice, KeepBoth, Retire, Winner
from zero_memory.conflicts.models import BulkFailure, BulkItem, BulkResult, Policy
from zero_memory.conflicts.queue import visible_dispute
from zero_memory.conflicts.resolve import settle
from zero_memory.domain.memory import Memory
from zero_memory.domain.records import DisputeShape, DisputeStatus
from zero_memory.store.ports.review import DisputeQuery

MAX_ITEMS = 100
POLICY_PAGE = 500


def resolve_conflicts(
    app: App, caller: Caller, *, policy: Policy | None = None, resolutions: list[BulkItem] | None = None
) -> BulkResult:
    if (policy is None) == (resolutions is None):
        raise errors.validation("pass exactly one of policy or resolutions")
    if resolutions is not None:
        if len(resolutions) > MAX_ITEMS:
            raise errors.validation(f"resolutions: {len(resolutions)} items; at most {MAX_ITEMS} per call")
        return _explicit(app, caller, resolutions)
    assert policy is not None
    return _policy(app, caller, policy)


def item_choice(item: BulkItem) -> Choice:
    """An explicit item's choice: its winner, retire, or (neither) keep both."""
    if item.winner is not None and item.retire:
        raise errors.validation("pass winner or retire, not both")
    if item.winner is not None:
        return Winner(item.winner)
    return Retire() if item.retire else KeepBoth()


def policy_choice(policy: Policy, a: Memory, b: Memory) -> Choice | None:
    """A policy's choice for a pair row, or None to skip the row: the side the policy would keep is gone."""
    if policy.name == "keep_both":
        return KeepBoth()
    newer, older = sorted((a, b), key=lambda m: (m.created_at, m.id), reverse=True)
    winner = newer if policy.name == "newest_wins" else older
    return Winner(winner.id) if winner.live else None


def _explicit(app: App, caller: Caller, items: list[BulkItem]) -> BulkResult:
    resolved, failed = [], []
    for item in items:
        try:
            choice = item_choice(item)
            with app.store.tx(write=True) as tx:
                vis = visibility(tx, caller.uid)
                dispute, memories = visible_dispute(tx, vis, item.dispute_id)
                settle(app, tx, vis, caller, dispute, memories, choice)
            resolved.append(item.dispute_id)
        except errors.ZMError as error:
            failed.append(BulkFailure(dispute_id=item.dispute_id, error=str(error)))
    return BulkResult(resolved=resolved, skipped=[], failed=failed)


def _policy(app: App, caller: Caller, policy: Policy) -> BulkResult:
    resolved, skipped, failed = [], [], []
    with app.store.tx() as tx:
        vis = visibility(tx, caller.uid)
        rows = tx.list_disputes(
            DisputeQuery(scopes=vis.readable, status=DisputeStatus.PENDING, verdict=policy.verdict, limit=10_000)
        )
    for row in rows:
        if row.shape is DisputeShape.SINGLE:
            skipped.append(row.id)
            continue
        try:
            with app.store.tx(write=True) as tx:
                vis = visibility(tx, caller.uid)
                dispute, memories = visible_dispute(tx, vis, row.id)
                choice = policy_choice(policy, memories[dispute.memory_a], memories[dispute.memory_b or ""])
                if choice is None:
                    skipped.append(row.id)
                    continue
                settle(app, tx, vis, caller, dispute, memories, choice)
            resolved.append(row.id)
        except errors.ZMError as error:
            failed.append(BulkFailure(dispute_id=row.id, error=str(error)))
    return BulkResult(resolved=resolved, skipped=skipped, failed=failed)
