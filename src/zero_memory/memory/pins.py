"""Pinned rules: a person marks a memory as a standing rule, and every briefing leads with it.

Pinning needs write access to the memory's scope (a pin in a shared project
leads every member's briefing) and a live memory; unpinning only the access.
Both are audited transitions (``transitions.pin`` / ``unpin``) and undo each
other. A pinned memory that is retired simply drops out of briefings; restored,
it leads them again.
"""

from __future__ import annotations

from zero_memory import errors, transitions
from zero_memory.access.caller import Caller
from zero_memory.access.visibility import visibility
from zero_memory.app import App
from zero_memory.memory.context_models import PinResult
from zero_memory.memory.lifecycle import writable


def pin(app: App, caller: Caller, memory_id: str) -> PinResult:
    with app.store.tx(write=True) as tx:
        memory = writable(tx, visibility(tx, caller.uid), memory_id)
        if not memory.live:
            raise errors.validation(f"id: {memory.id} is not live; restore it before pinning it")
        changed = transitions.pin(tx, memory, actor=caller.uid, at=app.clock())
    return PinResult(id=memory.id, pinned=True, changed=changed)


def unpin(app: App, caller: Caller, memory_id: str) -> PinResult:
    with app.store.tx(write=True) as tx:
        memory = writable(tx, visibility(tx, caller.uid), memory_id)
        changed = transitions.unpin(tx, memory, actor=caller.uid, at=app.clock())
    return PinResult(id=memory.id, pinned=False, changed=changed)
