"""Who reads: every read of memories names the caller's ``Visibility`` or ``SYSTEM``; there is no
unfiltered default."""

from __future__ import annotations

from zero_memory.domain.records import Visibility


class System:
    """The reader of a system pass: sees every memory, named explicitly."""

    def __repr__(self) -> str:
        return "SYSTEM"


SYSTEM = System()
Reader = Visibility | System
