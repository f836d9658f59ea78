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
decides; a stage that only needs to know (loop closure, before it asks the
judge) reads ``held_back``, the rule ``hold`` applies. A person's or an
agent's ``retire`` is never held.
"""

from __future__ import annotations

from zero_memory.transitions.anchors import accept_anchors, follow_anchor
from zero_memory.transitions.loops import close_loop, close_loop_automatically
from zero_memory.transitions.memories import (
    REAFFIRM,
    create,
    link,
    move,
    pin,
    reaffirm,
    remember_existing,
    restore,
    retire,
    unpin,
)
from zero_memory.transitions.portability import propose_portability, settle_portability
from zero_memory.transitions.queue import (
    CHALLENGE,
    Queued,
    challenge,
    dismiss,
    escalate,
    held_back,
    hold,
    raise_dispute,
    resolve_dispute,
    retire_automatically,
)
from zero_memory.transitions.reexamination import cap_stop, examine
from zero_memory.transitions.runs import finish_run, start_run, undo_links

__all__ = [
    "CHALLENGE",
    "REAFFIRM",
    "Queued",
    "accept_anchors",
    "cap_stop",
    "challenge",
    "close_loop",
    "close_loop_automatically",
    "create",
    "dismiss",
    "escalate",
    "examine",
    "finish_run",
    "follow_anchor",
    "held_back",
    "hold",
    "link",
    "move",
    "pin",
    "propose_portability",
    "raise_dispute",
    "reaffirm",
    "remember_existing",
    "resolve_dispute",
    "restore",
    "retire",
    "retire_automatically",
    "settle_portability",
    "start_run",
    "undo_links",
    "unpin",
]
