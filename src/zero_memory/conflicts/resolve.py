"""Settling one dispute (docs/spec/hygiene.md §4): read the row, plan, apply, all in one write transaction.

The decision is ``plan`` (pure, table-tested) and the changes are ``apply``
(transitions with their audit rows); this module only gathers what they need.
A merge's text is checked and embedded before the transaction opens, so a
refused text touches nothing and the embedding model never runs while the
database is locked.
"""

from __future__ import annotations

import numpy as np

from zero_memory.access.caller import Caller
from zero_memory.access.visibility import visibility
from zero_memory.app import App
from zero_memory.conflicts.apply import apply
from zero_memory.conflicts.choice import Choice, Merge
from zero_memory.conflicts.models import Resolution
from zero_memory.conflicts.plan import Context, plan
from zero_memory.conflicts.queue import visible_dispute
from zero_memory.domain.memory import AuthorKind, Memory, Rank
from zero_memory.domain.records import Dispute, Visibility
from zero_memory.ids import memory_id
from zero_memory.memory.validation import check_fields, check_text
from zero_memory.store.base import Tx


def resolve_conflict(app: App, caller: Caller, dispute_id: str, choice: Choice, *, human: bool = False) -> Resolution:
    """Settle a dispute. ``human``: the caller typed the merge text themselves (the dashboard)."""
    vector = None
    if isinstance(choice, Merge):
        check_text("merge", choice.text)
        check_fields({"merge": choice.text})
        vector = app.embedder.embed([choice.text])[0]
    with app.store.tx(write=True) as tx:
        vis = visibility(tx, caller.uid)
        dispute, memories = visible_dispute(tx, vis, dispute_id)
        return settle(app, tx, vis, caller, dispute, memories, choice, human=human, vector=vector)


def settle(
    app: App,
    tx: Tx,
    vis: Visibility,
    caller: Caller,
    dispute: Dispute,
    memories: dict[str, Memory],
    choice: Choice,
    *,
    human: bool = False,
    vector: np.ndarray | None = None,
) -> Resolution:
    """Plan and apply one settlement inside the caller's write transaction (``resolve_conflicts`` loops on it)."""
    ctx = context(app, vis, caller, human=human)
    return apply(tx, plan(dispute, memories, choice, ctx), vector=vector, model=app.embedder.model_id)


def context(app: App, vis: Visibility, caller: Caller, *, human: bool) -> Context:
    """Who settles, now: a person typing a merge signs it as a human at rank 2, an agent as itself at rank 1."""
    if human:
        author_kind, agent_name, rank = AuthorKind.HUMAN, "dashboard", Rank.HUMAN
    else:
        author_kind, agent_name, rank = AuthorKind(caller.author_kind), caller.client, Rank.AGENT
    return Context(
        actor=caller.uid,
        writable=vis.writable,
        author_kind=author_kind,
        agent_name=agent_name,
        rank=rank,
        at=app.clock(),
        merged_id=memory_id(),
    )
