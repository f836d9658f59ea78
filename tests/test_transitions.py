"""Every transition, one row each: the state before, who acts, the state after and the audit rows written.

On a real SQLite store. Persons and agents act under their user id through the
plain transitions (an agent's settlement says so in its payload, ``settled_by``);
automation acts as ``hygiene.<pass>`` through the guarded ones
(``retire_automatically``, ``close_loop_automatically``, ``hold``), and the
guard rows show the invariant: an automatic retirement of a restored or
disputed memory becomes a queue row, while a person may still retire it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime

import pytest

from tests.memory.helpers import write
from zero_memory import transitions
from zero_memory.access.caller import Caller
from zero_memory.app import App
from zero_memory.domain.anchors import AnchorRecord, AnchorState, Origin
from zero_memory.domain.memory import InvalidationReason, Memory
from zero_memory.domain.records import (
    AuditEntry,
    Dispute,
    DisputeShape,
    DisputeStatus,
    PortabilityCandidate,
    Run,
    RunStatus,
    pair_key,
)
from zero_memory.ids import new_id
from zero_memory.store import SYSTEM, Tx, system_tx

AUTOMATIC, PERSON, AGENT = "hygiene.sweep", "alice", "alice"  # an agent acts under its user's id


@dataclass
class World:
    """The memories and records a row acts on; ``subject`` is the one whose state the row checks."""

    subject: Memory
    other: Memory
    at: datetime
    run: Run
    row: Dispute | None = None
    candidate: PortabilityCandidate | None = None


def pair_row(w: World, verdict: str = "contradiction") -> Dispute:
    return Dispute(
        id=new_id("dsp"),
        owner=w.subject.owner,
        shape=DisputeShape.PAIR,
        verdict=verdict,
        origin="sweep",
        status=DisputeStatus.PENDING,
        memory_a=w.subject.id,
        memory_b=w.other.id,
        pair_key=pair_key(w.subject.id, w.other.id),
        created_at=w.at,
        run_id=w.run.id,
    )


def queued(w: World) -> transitions.Queued:
    return transitions.Queued(replace(pair_row(w, "supersedes"), direction="b_supersedes_a"), {"rule": 7})


# --- the states before -------------------------------------------------------------------------------------


def live(tx: Tx, w: World) -> None:
    return None


def invalidated(tx: Tx, w: World) -> None:
    transitions.retire(
        tx, w.subject, successor=None, reason=InvalidationReason.FORGOTTEN, actor=PERSON, action="forget", at=w.at
    )


def restored(tx: Tx, w: World) -> None:
    invalidated(tx, w)
    transitions.restore(tx, _now(tx, w.subject), actor=PERSON, at=w.at)


def disputed(tx: Tx, w: World) -> None:
    w.row = Dispute.single(
        new_id("dsp"),
        owner="alice",
        verdict="challenged",
        origin="challenge",
        memory_id=w.subject.id,
        at=w.at,
        reason="?",
    )
    transitions.raise_dispute(tx, w.row, actor=PERSON, at=w.at)


def pair_pending(tx: Tx, w: World) -> None:
    w.row = pair_row(w)
    transitions.raise_dispute(tx, w.row, actor=AUTOMATIC, at=w.at)


def pinned(tx: Tx, w: World) -> None:
    transitions.pin(tx, w.subject, actor=PERSON, at=w.at)


def run_started(tx: Tx, w: World) -> None:
    transitions.start_run(tx, w.run, at=w.at)


def run_linked(tx: Tx, w: World) -> None:
    run_started(tx, w)
    transitions.link(tx, w.other, w.subject, "relates_to", actor=AUTOMATIC, at=w.at, run_id=w.run.id)


def proposed(tx: Tx, w: World) -> None:
    w.candidate = PortabilityCandidate(
        id=new_id("prt"),
        memory_id=w.subject.id,
        owner="alice",
        status="pending",
        original_scope=w.subject.scope,
        created_at=w.at,
        confidence=0.9,
        rationale="a world fact",
        model="fake",
        run_id=None,
    )
    transitions.propose_portability(tx, w.candidate, portable=True)


def _get(tx: Tx, memory_id: str) -> Memory:
    found = tx.get_memory(memory_id, SYSTEM)
    assert found is not None
    return found


def _now(tx: Tx, memory: Memory) -> Memory:
    """The memory as it stands now (a row's ``before`` may have changed it)."""
    return _get(tx, memory.id)


# --- the transitions, as each actor calls them ---------------------------------------------------------------


def retire_as(actor: str) -> Callable[[Tx, World], object]:
    def act(tx: Tx, w: World) -> object:
        transitions.retire(
            tx,
            _now(tx, w.subject),
            successor=w.other.id,
            reason=InvalidationReason.SUPERSEDED,
            actor=actor,
            action="supersede",
            at=w.at,
        )
        return None

    return act


def retire_automatically(tx: Tx, w: World) -> object:
    return transitions.retire_automatically(
        tx,
        _now(tx, w.subject),
        queued=queued(w),
        successor=w.other.id,
        reason=InvalidationReason.SUPERSEDED,
        actor=AUTOMATIC,
        action="hygiene.auto_resolve",
        at=w.at,
        run_id=w.run.id,
    )


def close_automatically(tx: Tx, w: World) -> object:
    return transitions.close_loop_automatically(
        tx, _now(tx, w.subject), actor="hygiene.loop_closure", at=w.at, evidence=w.other, run_id=w.run.id
    )


def close_as_person(tx: Tx, w: World) -> object:
    transitions.close_loop(tx, _now(tx, w.subject), actor=PERSON, at=w.at, note="done")
    return None


def restore(tx: Tx, w: World) -> object:
    return transitions.restore(tx, _now(tx, w.subject), actor=PERSON, at=w.at)


def move(tx: Tx, w: World) -> object:
    transitions.move(tx, _now(tx, w.subject), "user.alice.core", actor=PERSON, at=w.at)
    return None


def link(tx: Tx, w: World) -> object:
    return transitions.link(tx, w.subject, w.other, "relates_to", actor=AGENT, at=w.at)


def raise_contradiction(tx: Tx, w: World) -> object:
    return transitions.raise_dispute(tx, pair_row(w), actor=AUTOMATIC, at=w.at, contradicts=True)


def resolve(tx: Tx, w: World) -> object:
    assert w.row is not None
    return transitions.resolve_dispute(
        tx, w.row, {"keep_both": True}, actor=AGENT, at=w.at, payload={"settled_by": "agent"}
    )


def dismiss(tx: Tx, w: World) -> object:
    assert w.row is not None
    return transitions.dismiss(tx, w.row, actor=AUTOMATIC, at=w.at, why={"stale": True}, run_id=w.run.id)


def escalate(tx: Tx, w: World) -> object:
    assert w.row is not None
    return transitions.escalate(tx, w.row, "stale_suspect", actor="hygiene.suspects", at=w.at, run_id=w.run.id)


def pin(tx: Tx, w: World) -> object:
    return transitions.pin(tx, w.subject, actor=PERSON, at=w.at)


def unpin(tx: Tx, w: World) -> object:
    return transitions.unpin(tx, w.subject, actor=PERSON, at=w.at)


def start_run(tx: Tx, w: World) -> object:
    return transitions.start_run(tx, w.run, at=w.at)


def finish_run(tx: Tx, w: World) -> object:
    transitions.finish_run(tx, w.run, RunStatus.COMPLETED, {"auto_resolved": 1, "queued": 0}, at=w.at)
    return None


def undo_links(tx: Tx, w: World) -> object:
    return transitions.undo_links(tx, w.run, actor=PERSON, at=w.at, restored=[], anchors_moved_back=0)


def approve(tx: Tx, w: World) -> object:
    assert w.candidate is not None
    transitions.settle_portability(
        tx, w.candidate, _now(tx, w.subject), target="user.alice.core", actor=PERSON, at=w.at
    )
    return None


def dismiss_proposal(tx: Tx, w: World) -> object:
    assert w.candidate is not None
    transitions.settle_portability(tx, w.candidate, _now(tx, w.subject), target=None, actor=PERSON, at=w.at)
    return None


def _anchor(w: World, path: str) -> AnchorRecord:
    return AnchorRecord(w.subject.id, path, None, Origin.EXPLICIT, AnchorState.VERIFIED, "r", "c1", "h1", w.at)


def anchored(tx: Tx, w: World) -> None:
    tx.set_anchors(w.subject.id, [_anchor(w, "src/a.py")], w.at)


def challenge(tx: Tx, w: World) -> object:
    assert w.row is not None
    transitions.challenge(tx, w.subject, w.row.id, actor=AGENT, at=w.at, payload={"reason": "?", "session": "s"})
    return None


def reaffirm(tx: Tx, w: World) -> object:
    transitions.reaffirm(tx, w.subject, actor=PERSON, at=w.at, payload={"stale_days": 3})
    return None


def absorbed(tx: Tx, w: World) -> object:
    transitions.remember_existing(tx, w.subject, "absorbed", actor=AGENT, at=w.at, payload={"rank": 1})
    return None


def follow_anchor(tx: Tx, w: World) -> object:
    before = tx.anchors_of([w.subject.id])[w.subject.id][0]
    return transitions.follow_anchor(
        tx, before, replace(before, path="src/b.py"), owner="alice", actor=PERSON, action="anchor.move", at=w.at,
        payload={"from": "src/a.py"}, run_id=None,
    )  # fmt: skip


def accept_anchors(tx: Tx, w: World) -> object:
    kept = [_anchor(w, "src/b.py")]
    transitions.accept_anchors(tx, w.subject.id, kept, [{"anchor": "src/a.py"}], owner="alice", actor=PERSON, at=w.at)
    return None


def examine(tx: Tx, w: World) -> object:
    transitions.examine(tx, w.subject, owner="alice", model="fake", at=w.at, run_id=w.run.id, payload={"pairs": 1})
    return None


def cap_stop(tx: Tx, w: World) -> object:
    transitions.cap_stop(tx, w.subject, owner="alice", at=w.at, run_id=w.run.id, payload={"cap": 1})
    return None


# --- the table ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    name: str
    before: Callable[[Tx, World], None]
    actor: str  # automatic, person or agent
    act: Callable[[Tx, World], object]
    status: str  # the subject's status after: live or invalidated
    audit: tuple[str, ...]  # the audit rows the transition wrote, in order
    returns: object = None
    pending: int = 0  # the subject's pending queue rows after
    links: tuple[str, ...] = ()  # the live links of the subject after, by type
    kind: str = "fact"


ROWS = [
    # the guard: automation never retires a restored or disputed memory; a person (or an agent) may
    Row("auto retire of a live memory", live, "automatic", retire_automatically, "invalidated",
        ("hygiene.auto_resolve",), True, links=("supersedes",)),
    Row("auto retire of a restored memory is queued", restored, "automatic", retire_automatically, "live",
        ("queue.raise",), False, pending=1),
    Row("auto retire of a disputed memory is queued", disputed, "automatic", retire_automatically, "live",
        ("queue.raise",), False, pending=2),
    Row("a person retires a restored memory", restored, "person", retire_as(PERSON), "invalidated",
        ("supersede",), links=("supersedes",)),
    Row("an agent retires a disputed memory", disputed, "agent", retire_as(AGENT), "invalidated",
        ("supersede",), pending=1, links=("supersedes",)),
    Row("auto close of an open loop", live, "automatic", close_automatically, "invalidated",
        ("close_loop", "loop_closure.link"), True, links=("relates_to",), kind="task"),
    Row("auto close of a reopened loop keeps it open", restored, "automatic", close_automatically, "live",
        (), False, kind="task"),
    Row("auto close of a disputed loop keeps it open", disputed, "automatic", close_automatically, "live",
        (), False, pending=1, kind="task"),
    Row("a person closes a reopened loop", restored, "person", close_as_person, "invalidated",
        ("close_loop",), kind="task"),
    # the other transitions
    Row("restore", invalidated, "person", restore, "live", ("restore",), []),
    Row("move", live, "person", move, "live", ("move",)),
    Row("link", live, "agent", link, "live", ("link",), True, links=("relates_to",)),
    Row("raise a contradiction, linked", live, "automatic", raise_contradiction, "live",
        ("queue.raise",), True, pending=1, links=("contradicts",)),
    Row("resolve a row", pair_pending, "agent", resolve, "live", ("queue.resolve",), True),
    Row("dismiss a row", pair_pending, "automatic", dismiss, "live", ("queue.dismiss",), True),
    Row("escalate a challenge", disputed, "automatic", escalate, "live", ("queue.escalate",), True, pending=1),
    Row("pin", live, "person", pin, "live", ("pin",), True),
    Row("unpin", pinned, "person", unpin, "live", ("unpin",), True),
    Row("start a run", live, "automatic", start_run, "live", ("run.start",), True),
    Row("finish a run", run_started, "automatic", finish_run, "live", ("run.stop",)),
    Row("undo a run's links", run_linked, "person", undo_links, "live", ("run.undo",), 1),
    Row("propose portability", live, "automatic", proposed, "live", ("portability.propose",)),
    Row("approve a proposal", proposed, "person", approve, "live", ("move", "portability.approve")),
    Row("dismiss a proposal", proposed, "person", dismiss_proposal, "live", ("portability.dismiss",)),
    Row("challenge a disputed memory", disputed, "agent", challenge, "live", ("challenge",), pending=1),
    Row("reaffirm", live, "person", reaffirm, "live", ("reaffirm",)),
    Row("a write absorbed", live, "agent", absorbed, "live", ("remember.absorbed",)),
    Row("an anchor follows its code", anchored, "person", follow_anchor, "live", ("anchor.move",), True),
    Row("anchors accepted", anchored, "person", accept_anchors, "live", ("anchor.accept",)),
    Row("re-examined", run_started, "automatic", examine, "live", ("rescan.examine",)),
    Row("re-examination capped", run_started, "automatic", cap_stop, "live", ("rescan.cap_stop",)),
]  # fmt: skip


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_transition(app: App, alice: Caller, row: Row) -> None:
    texts = ("Open the release branch on Friday", "The release branch is open") if row.kind == "task" else (
        "The build runs on tox", "The build runs on nox")  # fmt: skip
    subject = write(app, alice, texts[0], kind=row.kind)
    other = write(app, alice, texts[1])
    at = app.clock()
    with system_tx(app.store, "test", write=True) as tx:
        w = World(_get(tx, subject.id), _get(tx, other.id), at, _run(at))
        row.before(tx, w)
        first = _last_seq(tx, w)
    with system_tx(app.store, "test", write=True) as tx:
        returned = row.act(tx, w)
    with system_tx(app.store, "test") as tx:
        after = _now(tx, w.subject)
        written = [e for e in _audit(tx, w) if e.seq > first]
        pending = tx.open_disputes_for([after.id])
        links = sorted(lk.type for lk in tx.links_of(after.id))
    assert after.status.value == row.status, row.name
    assert [e.action for e in written] == list(row.audit), row.name
    assert (returned[1] if isinstance(returned, tuple) else returned) == row.returns, row.name  # raise_dispute
    assert len(pending) == row.pending, row.name
    assert links == sorted(row.links), row.name
    if row.actor == "automatic":
        assert all(e.actor.startswith("hygiene.") for e in written), row.name
    else:
        assert all(e.actor == "alice" for e in written), row.name


def test_a_held_retirement_raises_the_row_its_caller_prepared(app: App, alice: Caller) -> None:
    """The guard's queue row is the caller's: its verdict, direction and audit payload, a question for a person."""
    subject = write(app, alice, "The build runs on tox")
    other = write(app, alice, "The build runs on nox")
    at = app.clock()
    with system_tx(app.store, "test", write=True) as tx:
        w = World(_get(tx, subject.id), _get(tx, other.id), at, _run(at))
        restored(tx, w)
        assert retire_automatically(tx, w) is False
    with system_tx(app.store, "test") as tx:
        row = tx.dispute_for_pair(pair_key(subject.id, other.id))
        raised = [e for e in tx.audit_for_memory(subject.id) if e.action == "queue.raise"]
    assert row is not None and row.pending
    assert (row.verdict, row.direction, row.run_id) == ("supersedes", "b_supersedes_a", w.run.id)
    assert raised[0].payload["rule"] == 7


def _run(at: datetime) -> Run:
    return Run.running(new_id("run"), owner="alice", kind="sweep", started_by="alice", at=at)


def _audit(tx: Tx, w: World) -> list[AuditEntry]:
    """The audit rows naming either memory or the run, oldest first."""
    seen: dict[int, AuditEntry] = {}
    for memory_id in (w.subject.id, w.other.id):
        for entry in tx.audit_for_memory(memory_id):
            seen[entry.seq] = entry
    for entry in tx.audit_for_run(w.run.id):
        seen[entry.seq] = entry
    return [seen[seq] for seq in sorted(seen)]


def _last_seq(tx: Tx, w: World) -> int:
    entries = _audit(tx, w)
    return entries[-1].seq if entries else 0
