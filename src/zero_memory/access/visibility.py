"""The one visibility predicate: the scopes a user may read and write.

A user reads their personal root, their core, and every project or team scope
they are a member of; writes need the writer or admin role there. Every
service computes a ``Visibility`` once per call and hands it to the store,
and computing it names the caller to the transaction: on PostgreSQL the
row-level security policies (migration 0009) mirror this predicate, so a query
that forgot its filter still sees only this user's rows.
"""

from __future__ import annotations

from zero_memory.domain import scopes
from zero_memory.domain.records import Visibility
from zero_memory.domain.scopes import ROLE_CAN_WRITE
from zero_memory.store.base import Tx


def visibility(tx: Tx, uid: str) -> Visibility:
    """The caller's scopes; the transaction then acts for ``uid`` (row-level security on PostgreSQL)."""
    members = tx.act_as_member(uid)
    own = {scopes.personal(uid), scopes.core(uid)}
    readable = own | {m.scope for m in members}
    writable = own | {m.scope for m in members if m.role in ROLE_CAN_WRITE}
    return Visibility(uid=uid, readable=frozenset(readable), writable=frozenset(writable))
