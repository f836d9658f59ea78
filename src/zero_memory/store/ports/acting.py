"""The store port's ``ActingTx``: one family of ``Tx`` (``store/base.py``)."""

from __future__ import annotations

from typing import Protocol

from zero_memory.domain.records import Membership


class ActingTx(Protocol):
    """Whom a transaction acts for (PostgreSQL's row-level security; nothing to enforce on SQLite), and the
    serialization of writers that must not race."""

    def serialize(self, key: str) -> None:
        """Serialize this write transaction with every other one naming the same key."""
        ...

    def act_as(self, uid: str) -> None:
        """Act for one user: on PostgreSQL, rows that user may not see are then invisible to this transaction.

        ``access.visibility`` calls it; a transaction acts for one user only.
        """
        ...

    def act_as_member(self, uid: str) -> list[Membership]:
        """``act_as(uid)``, then that user's memberships (``AccountTx.memberships``): what
        ``access.visibility`` starts from, in one round trip on PostgreSQL."""
        ...

    def act_as_system(self, name: str) -> None:
        """Act as the named system pass (hygiene, an operator command): every user's rows are visible."""
        ...
