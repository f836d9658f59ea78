"""The full-text rule both stores share: which words to look up, and how a text scores.

A query's words and a memory's text are compared by their stems
(store/stems.py: "deploys" and "deploy" are one word), the stems each store's
index holds. A query's stems are weighted by their BM25 inverse document
frequency over the whole store, and a text scores BM25's saturating term
frequency of the stems it holds, ``tf / (tf + K1 × norm)``, with BM25's length
normalisation ``norm`` (``B``, against a text of ``TYPICAL_LENGTH`` words). A
stem the text holds only in other forms than the query's words counts
``INFLECTION_SHARE`` of its weight. The score is the share of the query's
weight this comes to (0 to 1, the same for a memory on any store and in any
candidate set). Query words no memory holds count nothing, but neither may the
few common words found stand for the whole query: together the words no memory
holds add to the total what the words found lack of ``ABSENT_FLOOR`` times the
weight of such a word. That weight is what a word no memory holds would have in
a store of ``ABSENT_DOCUMENTS`` memories, or of the store's own size if larger:
a store of a dozen memories can't tell a rare word from a common one (there,
any word one memory holds has nearly the weight of a word none holds), so its
absences weigh what a store large enough to tell would give them. The values
were measured (docs/calibration.md, "The lexical rule" and "Small stores"): a
small ``K1`` (a repeated word is a tie-breaker), no length normalisation (``B``
0: longer notes were no less relevant), half a weight for another form of the
word.

Ranking every memory that contains a common word would cost a walk of that
word's postings, which grows with the store. So the search runs in two stages:

1. **candidates** (each store, by its index): the memories holding any of the
   query's rarest words — rarest first, for as long as their document counts
   together stay within the budget (``postings_budget``) — ordered by the weight of those
   words they hold, newer first among equals;
2. **scoring** (here, on the candidates' text and on the vector side's
   candidates alike): ``TextPlan.score`` over *every* word of the query, so the
   common words still separate the memories the rare ones brought in.

The budget was measured on the quality benchmark (docs/calibration.md): at 100k
memories 5,000 postings reached the plateau of the rule without stems; with
stems a word's count is the sum of its forms', fewer of a query's words fit,
and 20,000 brings back what 5,000 lost (full text alone finds the target in
the first ten for 0.563 of the queries against 0.387). At 10k memories 20,000
gained nothing on 5,000 and cost a quarter of recall's fixed cost (words held
by half the store matched): the budget is a fifth of the store's memories,
never less than 5,000 nor more than 20,000 (``POSTINGS_BUDGET``).
Weights are integers (micro-units of IDF) so both stores sum them exactly and
order equal scores the same way.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from zero_memory.store.stems import stem
from zero_memory.store.terms import WORD_RE

POSTINGS_BUDGET = 20_000  # the candidate stage's postings at most, whatever the store's size
POSTINGS_FLOOR = 5_000  # ... and at least (a small store's every word)
POSTINGS_SHARE = 0.2  # ... and otherwise this share of the store's memories
WEIGHT_SCALE = 1_000_000
K1 = 0.1  # how soon repeats of a word stop adding to its score (0: presence only)
B = 0.0  # how much a text's length matters (0: not at all, measured best)
TYPICAL_LENGTH = 16  # words: a text of this length counts a word once at its weight
ABSENT_FLOOR = 1.0  # the total the words found are topped up to, in weights of a word no memory holds
ABSENT_DOCUMENTS = 10_000  # a word no memory holds weighs at least what it would in a store this large
INFLECTION_SHARE = 0.5  # what a word counts when the text holds it in another form than the query's


def idf(documents: int, count: int) -> float:
    """BM25's inverse document frequency: always positive, highest for the rarest words."""
    return math.log(1.0 + (documents - count + 0.5) / (count + 0.5))


@dataclass(frozen=True, slots=True)
class TextPlan:
    """A query's words with their weights, and the rarest of them, which choose the candidates."""

    weights: Mapping[str, int] = field(default_factory=dict)
    matched: tuple[str, ...] = ()
    absent: int = 0  # the weight the query's words no memory holds add to the total
    forms: frozenset[str] = frozenset()  # the query's words as written (lowercase), of which ``weights`` has stems
    total: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "total", sum(self.weights.values()) + self.absent)
        if not self.forms:
            object.__setattr__(self, "forms", frozenset(self.weights))

    def score(self, text: str) -> float:
        """BM25 of ``text`` for the query's stems, as a share of the query's weight: 0 when it holds none of
        them, 1 when it holds all of them once at the typical length (capped there)."""
        weights = self.weights
        if not weights:
            return 0.0
        length, held = _held(text)
        forms = self.forms
        norm = K1 * (1.0 - B + B * length / TYPICAL_LENGTH)
        parts: list[float] = []
        # The query's few stems looked up in the text's, in the query's order (so two texts holding the same
        # stems sum the same parts in the same order, and score exactly alike).
        for root, weight in weights.items():
            written = held.get(root)
            if written is None:
                continue
            if type(written) is str:  # once, as written there
                parts.append(weight / (1.0 + norm) * (1.0 if written in forms else INFLECTION_SHARE))
            else:
                tf = len(written)
                exact = not forms.isdisjoint(written)
                parts.append(weight * tf / (tf + norm) * (1.0 if exact else INFLECTION_SHARE))
        return sum(parts) / self.total if parts else 0.0


TEXTS_KEPT = 32_768  # texts whose stems are kept for scoring (~600 bytes a text of twenty words)


@lru_cache(maxsize=TEXTS_KEPT)
def _held(text: str) -> tuple[int, dict[str, str | tuple[str, ...]]]:
    """A text's length in words, and each stem it holds with the words (lowercase) that hold it there: the
    word itself when it occurs once (most do), else every occurrence. Recall scores the same candidates'
    texts query after query, each against a query of a few stems: looking those up here costs a third of
    walking the text's every word (1.2 against 2.9 us a text at 10,000 memories). Each word is kept as one
    shared string, so a text kept costs a dict of references."""
    words = [sys.intern(word) for word in WORD_RE.findall(text.lower())]
    held: dict[str, str | tuple[str, ...]] = {}
    for word in words:
        root = stem(word)
        was = held.get(root)
        held[root] = word if was is None else (*was, word) if isinstance(was, tuple) else (was, word)
    return len(words), held


def postings_budget(documents: int) -> int:
    """The postings a query's matched words may hold together in a store of ``documents`` memories."""
    return min(POSTINGS_BUDGET, max(POSTINGS_FLOOR, int(documents * POSTINGS_SHARE)))


def plan(
    words: list[str],
    documents: int,
    counts: Mapping[str, int],
    budget: int | None = None,
    forms: frozenset[str] | None = None,
) -> TextPlan:
    """Weigh the words (stems) found in the store; match the rarest whose postings fit the budget together.

    Words no memory holds match nothing; together they top the total weight
    up to at most ``ABSENT_FLOOR`` times the weight of such a word (in a store
    of at least ``ABSENT_DOCUMENTS`` memories). A query
    whose rarest word alone exceeds the budget matches nothing: its candidates
    come from the vector side.
    """
    found = sorted((w for w in words if counts.get(w, 0) > 0), key=lambda w: (counts[w], w))
    documents = max(documents, max((counts[w] for w in found), default=0))
    budget = postings_budget(documents) if budget is None else budget
    weights = {w: max(1, round(idf(documents, counts[w]) * WEIGHT_SCALE)) for w in found}
    unheld = round(idf(max(documents, ABSENT_DOCUMENTS), 0) * WEIGHT_SCALE)
    missing = sum(unheld for w in words if counts.get(w, 0) <= 0)
    absent = min(missing, max(0, round(ABSENT_FLOOR * unheld) - sum(weights.values())))
    matched: list[str] = []
    spent = 0
    for word in found:
        spent += counts[word]
        if spent > budget:
            break
        matched.append(word)
    return TextPlan(weights, tuple(matched), absent, frozenset(words) if forms is None else forms)


MASKED_WORDS = 12  # up to this many matched words, rows are ranked by the set of words they hold


def rank_postings(postings: Sequence[np.ndarray], weights: Sequence[int]) -> np.ndarray:
    """The rows holding any of the matched words (each word's row numbers, ``seq``), best first: by the
    weight of the words each holds, newer (a higher number) first among equals. Each store reads the
    postings from its index and ranks them here, so both order the candidates alike; each walks the
    ranking a slice at a time, so it stays an array (a list of every row cost more than the ranking).

    Each word's postings come sorted, so a stable sort of them all merges a few runs. A row's weight
    depends only on which of the few matched words it holds: each row gets that set as a bit mask, each
    mask the place of its weight among the masks', and a stable sort of those small numbers (a radix
    sort) orders the rows, newest first among equals."""
    if not postings:
        return np.zeros(0, dtype=np.int64)
    seqs = np.concatenate([np.asarray(p, dtype=np.int64) for p in postings])
    if not len(seqs):
        return seqs
    if len(postings) > MASKED_WORDS:
        return _rank_by_sums(seqs, postings, weights)
    bits = np.concatenate([np.full(len(p), 1 << n, dtype=np.int64) for n, p in enumerate(postings)])
    order = np.argsort(seqs, kind="stable")
    ordered = seqs[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    rows = ordered[starts][::-1].copy()  # newest first
    # A row's mask is the sum of its words' bits (it holds each word once): running sums, read at each row's
    # last posting, less the previous row's (``np.add.reduceat`` took half as long again).
    summed = np.cumsum(bits[order])[np.append(starts[1:], len(ordered)) - 1]
    masks = np.diff(summed, prepend=0)[::-1]
    sums = np.zeros(1 << len(postings), dtype=np.int64)
    for n, weight in enumerate(weights):
        sums[np.arange(len(sums)) & (1 << n) != 0] += weight
    places = np.unique(-sums, return_inverse=True)[1].astype(np.uint16)  # equal weights share a place
    return rows[np.argsort(places[masks], kind="stable")]


def _rank_by_sums(seqs: np.ndarray, postings: Sequence[np.ndarray], weights: Sequence[int]) -> np.ndarray:
    """``rank_postings`` for many matched words: each row's summed weight, sorted."""
    scores = np.concatenate([np.full(len(p), w, dtype=np.float64) for p, w in zip(postings, weights, strict=True)])
    rows, where = np.unique(seqs, return_inverse=True)
    summed = np.bincount(where, weights=scores, minlength=len(rows))  # integer weights: exact in float64
    ranked: np.ndarray = rows[np.lexsort((-rows, -summed))]
    return ranked
