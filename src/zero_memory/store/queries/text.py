"""Full text, the part both stores share: the plan of a query and the ranking of its candidates.

Each adapter supplies the two steps that need its index (``_word_counts``,
``text_candidates``); the rule itself is ``store/fulltext.py``.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from zero_memory.domain.memory import Brief
from zero_memory.store.fulltext import TextPlan, plan
from zero_memory.store.ports.reader import SYSTEM, Reader
from zero_memory.store.queries.memories import MemoryQueries
from zero_memory.store.stems import stem
from zero_memory.store.terms import terms


class TextQueries(MemoryQueries):
    def text_plan(self, query: str) -> TextPlan:
        forms = terms(query)
        words = list(dict.fromkeys(stem(word) for word in forms))
        if not words:
            return TextPlan()
        documents, counts = self._word_counts(words)
        return plan(words, documents, counts, forms=frozenset(forms))

    def text_briefs(
        self, plan: TextPlan, *, scopes: Collection[str], limit: int, reader: Reader
    ) -> dict[str, tuple[Brief, np.ndarray | None]]:
        return self.briefs_with_vectors(self.text_candidates(plan, scopes=scopes, limit=limit), reader)

    def fulltext(self, query: str, *, scopes: Collection[str], limit: int) -> list[str]:
        """Live memories of ``scopes`` holding the query's words, best first: the candidates, scored."""
        text_plan = self.text_plan(query)
        ids = self.text_candidates(text_plan, scopes=scopes, limit=limit)
        found = self.get_memories(ids, SYSTEM)
        # Candidates come ordered by their rare words; the score over every word reorders them.
        return sorted((i for i in ids if i in found), key=lambda i: -text_plan.score(found[i].content))
