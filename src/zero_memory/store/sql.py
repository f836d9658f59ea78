"""The queries both stores share.

Both schemas use the same representations (ISO text timestamps, JSON text,
0/1 booleans), so everything but vector search, the index side of full text
and locking is one implementation, split in ``store/queries/`` by family, as
the port is in ``store/ports/``. SQL there uses ``?``
placeholders; the PostgreSQL adapter translates them. No query writes a
literal percent sign.
"""

from __future__ import annotations

from zero_memory.store.queries.accounts import AccountQueries
from zero_memory.store.queries.anchors import AnchorQueries
from zero_memory.store.queries.capture import CaptureQueries
from zero_memory.store.queries.copying import CopyQueries
from zero_memory.store.queries.erasure import ErasureQueries
from zero_memory.store.queries.guards import GuardQueries
from zero_memory.store.queries.history import HistoryQueries
from zero_memory.store.queries.marks import MarkQueries
from zero_memory.store.queries.memories import MemoryQueries
from zero_memory.store.queries.oauth import OAuthQueries
from zero_memory.store.queries.portability import PortabilityQueries
from zero_memory.store.queries.review import ReviewQueries
from zero_memory.store.queries.runs import RunQueries
from zero_memory.store.queries.surfacings import SurfacingQueries
from zero_memory.store.queries.text import TextQueries
from zero_memory.store.queries.usage import UsageQueries
from zero_memory.store.rows import MEMORY_COLUMNS, marks, memory_from_row
from zero_memory.store.tables import COPY_TABLES

__all__ = ["COPY_TABLES", "MEMORY_COLUMNS", "SqlTx", "marks", "memory_from_row"]


class SqlTx(
    MarkQueries,  # before the three families it asks together
    AccountQueries,
    OAuthQueries,
    TextQueries,
    MemoryQueries,
    HistoryQueries,
    ReviewQueries,
    RunQueries,
    GuardQueries,
    PortabilityQueries,
    UsageQueries,
    SurfacingQueries,
    CaptureQueries,
    CopyQueries,
    ErasureQueries,
    AnchorQueries,
):
    """Everything both stores do with the same SQL, one mixin per family of the port (``store/ports/``).
    Adapters supply the hooks of ``SqlBase``."""
