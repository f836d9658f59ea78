"""The store port.

Services reach data only through a ``Tx`` taken from ``Store.tx()``; nothing
outside ``store/`` writes SQL. Reads of memories take a ``Visibility`` (the
caller's scopes) or ``SYSTEM`` (a named system pass acting on an owner's
memories): there is no unfiltered default.

``Tx`` is the union of one protocol per family of queries, each in its own
module of ``store/ports/`` (accounts, memories, search, history, review, runs,
…): a family's contract is read there, its shared SQL in the
``store/queries/`` module of the same name.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol

from zero_memory.store.ports.accounts import AccountTx
from zero_memory.store.ports.acting import ActingTx
from zero_memory.store.ports.anchors import AnchorTx
from zero_memory.store.ports.capture import CaptureTx
from zero_memory.store.ports.copying import CopyTx
from zero_memory.store.ports.erasure import ErasureTx
from zero_memory.store.ports.guards import GuardTx
from zero_memory.store.ports.history import HistoryTx
from zero_memory.store.ports.memories import MemoryTx
from zero_memory.store.ports.oauth import OAuthTx
from zero_memory.store.ports.portability import PortabilityTx
from zero_memory.store.ports.review import ReviewTx
from zero_memory.store.ports.runs import RunTx
from zero_memory.store.ports.search import SearchTx
from zero_memory.store.ports.surfacings import SurfacingTx
from zero_memory.store.ports.usage import UsageTx


class Tx(
    ActingTx,
    AccountTx,
    OAuthTx,
    MemoryTx,
    SearchTx,
    HistoryTx,
    ReviewTx,
    RunTx,
    GuardTx,
    PortabilityTx,
    UsageTx,
    SurfacingTx,
    CaptureTx,
    ErasureTx,
    CopyTx,
    AnchorTx,
    Protocol,
):
    """A transaction: every family of the port at once, as ``Store.tx()`` gives it."""


class Store(Protocol):
    """A database. ``tx(write=True)`` serializes writers; reads see committed data."""

    backend: str
    dim: int
    # Whether a transaction's reads are done in the database server's process, this one waiting on a socket
    # without the GIL (PostgreSQL), rather than here holding it (SQLite): Python work on another thread runs
    # while they wait, at no cost to them.
    reads_in_server: bool

    def tx(self, *, write: bool = False) -> AbstractContextManager[Tx]: ...
    def advisory_lock(self, name: str) -> AbstractContextManager[bool]: ...
    def migrate(self) -> list[str]: ...
    def bulk_load(self, rows: int) -> AbstractContextManager[None]:
        """Around a load of about ``rows`` new memories in many transactions (an import, a copy): a store
        whose search index is cheaper to build once than to maintain row by row builds it after the load."""
        ...

    def load_index(self) -> None:
        """Bring the vector index into memory and up to the database, as the first search would (the SQLite
        store's snapshot read and the rows since caught up: 0.2-0.4 s at 100,000 memories, 2.6 s at a million);
        PostgreSQL's index lives in the server."""
        ...

    def wait_for_index(self) -> None:
        """Return once vector search uses the store's index rather than a scan of the rows: the SQLite
        store builds large clusters on a thread while searches scan (a benchmark timing the index, or a
        step preparing a store, waits for them); PostgreSQL's index is always the table's."""
        ...

    def purge_removed(self) -> None:
        """After ``Tx.erase_user``: remove what still holds the removed rows beside the tables (the SQLite
        vector index's snapshots and write-ahead log, PostgreSQL's dead row versions)."""
        ...

    def close(self) -> None: ...
