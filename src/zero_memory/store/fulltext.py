"""The full-text rule both stores share: which words to look up, and how a text scores.

A query's words are weighted by their BM25 inverse document frequency over the
whole store. Memories are a sentence or two, where a word rarely occurs twice
and lengths vary little, so term frequency is taken as one and length is not
normalised: a text's score is the weight of the query's words it contains, as
a fraction of the weight of all of them (0 to 1, the same for a memory on any
store and in any candidate set).

Ranking every memory that contains a common word would cost a walk of that
word's postings, which grows with the store. So the search runs in two stages:

1. **candidates** (each store, by its index): the memories holding any of the
   query's rarest words — rarest first, for as long as their document counts
   together stay within ``POSTINGS_BUDGET`` — ordered by the weight of those
   words they hold, newer first among equals;
2. **scoring** (here, on the candidates' text and on the vector side's
   candidates alike): ``TextPlan.score`` over *every* word of the query, so the
   common words still separate the memories the rare ones brought in.

The budget was measured on the quality benchmark (docs/calibration.md): at 100k
memories, 2,000 postings lost a tenth of hit@10, 5,000 reached the plateau.
Weights are integers (micro-units of IDF) so both stores sum them exactly and
order equal scores the same way.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

POSTINGS_BUDGET = 5_000
WEIGHT_SCALE = 1_000_000


def idf(documents: int, count: int) -> float:
    """BM25's inverse document frequency: always positive, highest for the rarest words."""
    return math.log(1.0 + (documents - count + 0.5) / (count + 0.5))


@dataclass(frozen=True, slots=True)
class TextPlan:
    """A query's words with their weights, and the rarest of them, which choose the candidates."""

    weights: Mapping[str, int] = field(default_factory=dict)
    matched: tuple[str, ...] = ()
    total: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "total", sum(self.weights.values()))

    def score(self, text: str) -> float:
        """The share of the query's weight that ``text`` holds: 0 when none of its words, 1 when all (a word
        counts where it stands whole, as ``terms.words_of`` splits the text)."""
        if not self.total:
            return 0.0
        lowered = text.lower()
        return sum(weight for word, weight in self.weights.items() if _holds(lowered, word)) / self.total


def _holds(text: str, word: str) -> bool:
    """Whether ``word`` stands whole in ``text``: no word character (a letter or digit, ``terms.WORD_RE``)
    just before or after it. A recall scores a hundred candidates: finding a few known words this way takes
    a fifth of the time of splitting each text into all of its words."""
    at = text.find(word)
    while at >= 0:
        end = at + len(word)
        if (at == 0 or not text[at - 1].isalnum()) and (end == len(text) or not text[end].isalnum()):
            return True
        at = text.find(word, at + 1)
    return False


def plan(words: list[str], documents: int, counts: Mapping[str, int], budget: int | None = None) -> TextPlan:
    """Weigh the words found in the store; match the rarest whose postings fit the budget together.

    Words no memory holds are dropped. A query whose rarest word alone exceeds
    the budget matches nothing: its candidates come from the vector side.
    """
    budget = POSTINGS_BUDGET if budget is None else budget
    found = sorted((w for w in words if counts.get(w, 0) > 0), key=lambda w: (counts[w], w))
    documents = max(documents, max((counts[w] for w in found), default=0))
    weights = {w: max(1, round(idf(documents, counts[w]) * WEIGHT_SCALE)) for w in found}
    matched: list[str] = []
    spent = 0
    for word in found:
        spent += counts[word]
        if spent > budget:
            break
        matched.append(word)
    return TextPlan(weights, tuple(matched))


def rank_postings(postings: Sequence[np.ndarray], weights: Sequence[int]) -> list[int]:
    """The rows holding any of the matched words (each word's row numbers, ``seq``), best first: by the
    weight of the words each holds, newer (a higher number) first among equals. Each store reads the
    postings from its index and ranks them here, so both order the candidates alike."""
    if not postings:
        return []
    seqs = np.concatenate([np.asarray(p, dtype=np.int64) for p in postings])
    scores = np.concatenate([np.full(len(p), w, dtype=np.float64) for p, w in zip(postings, weights, strict=True)])
    rows, where = np.unique(seqs, return_inverse=True)
    summed = np.bincount(where, weights=scores, minlength=len(rows))  # integer weights: exact in float64
    ranked: list[int] = rows[np.lexsort((-rows, -summed))].tolist()
    return ranked
