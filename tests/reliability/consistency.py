"""What a consistent database is, checked through the store port.

The crash, load and benchmark runs call ``assert_consistent(store)`` on the
database a killed or loaded server left behind. Each invariant is one thing
that a torn transaction, a lost write or a half-applied automatic action would
break; ``problems(store)`` lists every violation it finds, one line each:

1. **Whole memories.** Every memory row has its vector and the audit row that
   created it (``remember``, ``import`` or ``merge`` naming it first).
2. **Explained invalidations.** Every invalidated memory has an audit row
   written by the step that retired it (its ``reason`` and ``successor`` are
   the memory's current ``invalidated_reason`` and ``superseded_by``), later
   than the last ``restore`` of it.
3. **Whole supersedes.** Every memory invalidated as superseded, duplicate or
   merged names an existing successor in ``superseded_by``, and an active
   ``supersedes`` link runs from that successor to it. Conversely every active
   ``supersedes`` link points at an invalidated memory whose ``superseded_by``
   is the link's source, and no active link names a missing memory.
4. **Automatic actions are whole or undone.** Every ``hygiene.auto_resolve``
   audit row (successor, loser) names a run that exists, and its loser is
   still invalidated by that successor, or a ``restore`` of the loser was
   audited after it.
5. **No orphan queue row.** Every review-queue row names memories that exist;
   a pair row's ``pair_key`` is the key of its two memories and no other row
   has it; every row was raised with its ``queue.raise`` audit row.
6. **Runs end.** Every finished run has ``finished_at``; an interrupted run
   has its ``run.interrupted`` audit row; and, once the server's start-up
   sweep has run and nothing is scanning (``quiescent``), no run is left
   ``running``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from zero_memory.domain.memory import InvalidationReason, Memory
from zero_memory.domain.records import AuditEntry, Dispute, DisputeShape, RunStatus, pair_key
from zero_memory.store import Store, Tx, system_tx
from zero_memory.store.ports.review import DisputeQuery

CREATING_ACTIONS = ("remember", "import", "merge")
SUCCESSOR_REASONS = {InvalidationReason.SUPERSEDED, InvalidationReason.DUPLICATE, InvalidationReason.MERGED}
REASONS = {reason.value for reason in InvalidationReason}
PAGE = 500
MAX_SHOWN = 40


def assert_consistent(store: Store, *, quiescent: bool = True) -> None:
    """Fail with every violated invariant, one per line."""
    found = problems(store, quiescent=quiescent)
    shown = "\n".join(found[:MAX_SHOWN])
    more = f"\n… and {len(found) - MAX_SHOWN} more" if len(found) > MAX_SHOWN else ""
    assert not found, f"the database is inconsistent ({len(found)} problems):\n{shown}{more}"


def problems(store: Store, *, quiescent: bool = True) -> list[str]:
    """Every violation of the invariants above, in one read transaction."""
    with system_tx(store, "test") as tx:
        memories = {m.id: m for m in tx.iter_memories()}
        found = [*_memory_problems(tx, memories)]
        found += _auto_resolve_problems(tx, memories)
        found += _queue_problems(tx, memories)
        found += _run_problems(tx, quiescent)
    return found


def _memory_problems(tx: Tx, memories: dict[str, Memory]) -> Iterator[str]:
    for memory in memories.values():
        trail = tx.audit_for_memory(memory.id, limit=100_000)
        if tx.memory_vector(memory.id) is None:
            yield f"memory {memory.id}: no vector"
        if not any(e.action in CREATING_ACTIONS and e.memory_ids[:1] == [memory.id] for e in trail):
            yield f"memory {memory.id}: no audit row created it"
        if not memory.live:
            yield from _invalidation_problems(memory, trail)
        yield from _link_problems(tx, memory, memories)


def _invalidation_problems(memory: Memory, trail: list[AuditEntry]) -> Iterator[str]:
    restored = max((e.seq for e in trail if e.action == "restore" and e.memory_ids == [memory.id]), default=-1)
    retirements = [e for e in trail if e.seq > restored and _retires(e, memory.id)]
    reason = memory.invalidated_reason.value if memory.invalidated_reason else None
    if not any(
        e.payload.get("reason") == reason and e.payload.get("successor") == memory.superseded_by for e in retirements
    ):
        yield (
            f"memory {memory.id}: invalidated ({reason}, superseded_by {memory.superseded_by}) "
            "with no audit row that did it"
        )


def _retires(entry: AuditEntry, memory_id: str) -> bool:
    """An audit row written by ``retire``: the retired memory last, the reason in the payload."""
    return entry.memory_ids[-1:] == [memory_id] and entry.payload.get("reason") in REASONS


def _link_problems(tx: Tx, memory: Memory, memories: dict[str, Memory]) -> Iterator[str]:
    links = tx.links_of(memory.id)
    for link in links:
        other = link.dst if link.src == memory.id else link.src
        if other not in memories:
            yield f"link {link.id} ({link.type}): names missing memory {other}"
    incoming = [lk for lk in links if lk.type == "supersedes" and lk.dst == memory.id]
    if not memory.live and memory.invalidated_reason in SUCCESSOR_REASONS:
        successor = memory.superseded_by
        if successor is None or successor not in memories:
            yield f"memory {memory.id}: {memory.invalidated_reason} by missing successor {successor}"
        elif not any(lk.src == successor for lk in incoming):
            yield f"memory {memory.id}: {memory.invalidated_reason} by {successor} without an active supersedes link"
    for link in incoming:
        if memory.live or memory.superseded_by != link.src:
            yield (
                f"link {link.id}: supersedes {memory.id} from {link.src}, but {memory.id} is "
                f"{memory.status.value} with superseded_by {memory.superseded_by}"
            )


def _auto_resolve_problems(tx: Tx, memories: dict[str, Memory]) -> Iterator[str]:
    restores: dict[str, int] = {}
    for entry in tx.audit_actions("restore"):
        for memory_id in entry.memory_ids:
            restores[memory_id] = max(restores.get(memory_id, -1), entry.seq)
    for entry in tx.audit_actions("hygiene.auto_resolve"):
        successor, loser_id = entry.memory_ids[0], entry.memory_ids[-1]
        where = f"auto_resolve #{entry.seq} ({loser_id} by {successor}, run {entry.run_id})"
        if entry.run_id is None:
            yield f"{where}: it names no run"  # every automatic action belongs to a run, on-write scans too
        elif tx.get_run(entry.run_id) is None:
            yield f"{where}: its run does not exist"
        loser = memories.get(loser_id)
        if loser is None:
            yield f"{where}: the loser does not exist"
            continue
        still = not loser.live and loser.superseded_by == successor
        if not still and restores.get(loser_id, -1) < entry.seq:
            yield (
                f"{where}: half applied — the loser is {loser.status.value} "
                f"(superseded_by {loser.superseded_by}) and was never restored"
            )


def _disputes(tx: Tx) -> Iterator[Dispute]:
    after: str | None = None
    while True:
        page = tx.list_disputes(DisputeQuery(status=None, limit=PAGE, after=after))
        yield from page
        if len(page) < PAGE:
            return
        after = page[-1].id


def _queue_problems(tx: Tx, memories: dict[str, Memory]) -> Iterator[str]:
    disputes = list(_disputes(tx))
    raised = {entry.payload.get("dispute_id") for entry in tx.audit_actions("queue.raise")}
    keys = Counter(d.pair_key for d in disputes if d.pair_key is not None)
    for dispute in disputes:
        where = f"dispute {dispute.id} ({dispute.status.value} {dispute.verdict})"
        for memory_id in (dispute.memory_a, dispute.memory_b):
            if memory_id is not None and memory_id not in memories:
                yield f"{where}: names missing memory {memory_id}"
        if dispute.shape is DisputeShape.PAIR:
            if dispute.memory_b is None or dispute.pair_key != pair_key(dispute.memory_a, dispute.memory_b):
                yield f"{where}: pair_key {dispute.pair_key} is not the key of its memories"
            elif keys[dispute.pair_key] > 1:
                yield f"{where}: {keys[dispute.pair_key]} queue rows share pair_key {dispute.pair_key}"
        if dispute.id not in raised:
            yield f"{where}: no queue.raise audit row"


def _run_problems(tx: Tx, quiescent: bool) -> Iterator[str]:
    for status in RunStatus:
        for run in tx.runs_with_status(status):
            where = f"run {run.id} ({status.value})"
            if status is RunStatus.RUNNING:
                if quiescent:
                    yield f"{where}: still running after the start-up sweep"
                continue
            if run.finished_at is None:
                yield f"{where}: no finished_at"
            if status is RunStatus.INTERRUPTED and not any(
                e.action == "run.interrupted" for e in tx.audit_for_run(run.id)
            ):
                yield f"{where}: no run.interrupted audit row"
