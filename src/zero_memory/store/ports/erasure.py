"""The store port's ``ErasureTx``: one family of ``Tx`` (``store/base.py``)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol


class ErasureTx(Protocol):
    """Account deletion (``memory/erasure.py``): the one operation that removes rows (``queries/erasure.py``)."""

    def erase_user(self, uid: str, pseudonym: str, at: datetime) -> dict[str, int]:
        """Remove a user and their rows; memories they wrote to a scope another member reads stay, under
        ``pseudonym`` (store/queries/erasure.py). Rows removed per table, and ``kept_memories``, ``kept_projects``."""
        ...
