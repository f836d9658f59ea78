"""The fusion and full-text defaults of recall, re-derived offline on the quality benchmark's corpus.

    python benchmarks/fusion.py --home DIR [--size 100000] [--queries 300]

Reads the SQLite database ``benchmarks/quality.py --home DIR`` built for
``--size`` (texts and stored vectors), then replays recall's ranking in memory
for a grid of settings: the postings budget of the full-text candidates
(``store/fulltext.POSTINGS_BUDGET``), the weight of the text score in the
fusion (``memory/recall.TEXT_WEIGHT``), and, for comparison, reciprocal rank
fusion (k = 60 and 10) of the vector ranking with BM25 over every query word.
Word counts are exact (as SQLite's vocabulary gives them); the rule itself is
the code recall runs (``plan``, ``TextPlan.score``). Prints hit@1 / hit@10 per
setting. No age, reinforcement or provenance factor plays a part: the corpus
is imported at one moment and nothing was surfaced.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from collections import defaultdict
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import paraphrase_queries

from zero_memory.embedding.usem import UniversalSentenceEncoder
from zero_memory.store.fulltext import TextPlan, idf, plan
from zero_memory.store.terms import terms, words_of

POOL = 60


class Corpus:
    def __init__(self, database: Path, size: int, count: int) -> None:
        with sqlite3.connect(database) as conn:
            rows = conn.execute("SELECT content, embedding FROM memories WHERE status = 'live' ORDER BY seq").fetchall()
        self.texts = [r[0] for r in rows]
        self.matrix = np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows])
        self.words = [words_of(t) for t in self.texts]
        self.postings: dict[str, list[int]] = defaultdict(list)
        for row, words in enumerate(self.words):
            for word in words:
                self.postings[word].append(row)
        position = {t: i for i, t in enumerate(self.texts)}
        asked = paraphrase_queries(size, count)
        self.queries = [q for q, _ in asked]
        self.targets = [position[t] for _, t in asked]
        self.vectors = UniversalSentenceEncoder().embed(self.queries)

    def counts(self, words: list[str]) -> dict[str, int]:
        return {w: len(self.postings.get(w, ())) for w in words}

    def nearest(self, vector: np.ndarray, k: int) -> tuple[list[int], np.ndarray]:
        scores = self.matrix @ vector
        top = np.argpartition(-scores, k)[:k]
        return [int(i) for i in top[np.argsort(-scores[top])]], scores

    def candidates(self, weighed: TextPlan, limit: int) -> list[int]:
        """Stage one of full text: rows holding a matched word, by the weight of those words, newest first."""
        score: dict[int, int] = defaultdict(int)
        for word in weighed.matched:
            for row in self.postings[word]:
                score[row] += weighed.weights[word]
        return sorted(score, key=lambda r: (-score[r], -r))[:limit]


def recall_ranking(corpus: Corpus, n: int, *, budget: int, weight: float) -> list[int]:
    words = terms(corpus.queries[n])
    weighed = plan(words, len(corpus.texts), corpus.counts(words), budget=budget)
    pool, cosine = corpus.nearest(corpus.vectors[n], POOL)
    found = set(pool) | set(corpus.candidates(weighed, POOL))
    value = {r: max(0.0, float(cosine[r])) + weight * weighed.score(corpus.texts[r]) for r in found}
    return sorted(found, key=lambda r: (-value[r], r))[:10]


def rrf_ranking(corpus: Corpus, n: int, *, k: int) -> list[int]:
    """The former fusion: reciprocal ranks of the vector ranking and of BM25 over every query word."""
    words = [w for w in terms(corpus.queries[n]) if corpus.postings.get(w)]
    bm25: dict[int, float] = defaultdict(float)
    for word in words:
        weight = idf(len(corpus.texts), len(corpus.postings[word]))
        for row in corpus.postings[word]:
            bm25[row] += weight
    by_text = sorted(bm25, key=lambda r: (-bm25[r], r))[:POOL]
    pool, _ = corpus.nearest(corpus.vectors[n], POOL)
    fused: dict[int, float] = defaultdict(float)
    for ranking in (pool, by_text):
        for position, row in enumerate(ranking):
            fused[row] += 1.0 / (k + position + 1)
    return sorted(fused, key=lambda r: (-fused[r], r))[:10]


def hits(corpus: Corpus, rank: Callable[[int], list[int]]) -> tuple[float, float]:
    first = ten = 0
    for n, target in enumerate(corpus.targets):
        found = rank(n)
        first += found[:1] == [target]
        ten += target in found
    return first / len(corpus.targets), ten / len(corpus.targets)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", required=True, help="the --home of a benchmarks/quality.py run")
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--budgets", default="2000,3000,5000,10000")
    parser.add_argument("--weights", default="0.3,0.5,0.7,1.0")
    args = parser.parse_args()
    corpus = Corpus(Path(args.home) / f"sqlite-{args.size}" / "zm.db", args.size, args.queries)
    print(f"{args.size:,} memories, {len(corpus.queries)} queries, hit@1 / hit@10")
    rows: list[tuple[str, Callable[[int], list[int]]]] = [
        ("vector only", lambda n: corpus.nearest(corpus.vectors[n], 10)[0]),
        *((f"rrf k={k}, bm25 over every word", partial(rrf_ranking, corpus, k=k)) for k in (60, 10)),
        *(
            (f"budget {b}, text weight {w}", partial(recall_ranking, corpus, budget=b, weight=w))
            for b in (int(b) for b in args.budgets.split(","))
            for w in (float(w) for w in args.weights.split(","))
        ),
    ]
    for label, rank in rows:
        first, ten = hits(corpus, rank)
        print(f"  {label:<34} {first:.3f} / {ten:.3f}", flush=True)


if __name__ == "__main__":
    main()
