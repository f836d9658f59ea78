"""The graph's density and search expansion: how much of an exact scan's top ten a search finds, and at what cost.

    python benchmarks/graph_density.py --home DIR [--graphs 16:128,32:256] [--expansions 256,512,1024,2048]
        [--threads 2]

Reads the vectors of a store built by ``scale.py`` or ``quality.py`` (``DIR/zm.db``,
read only), builds a usearch graph for each ``connectivity:expansion_add`` as the
store does (int8, cosine, one thread), and for each search expansion asks it
for the store's count of candidates. Each search's hits are taken in the
graph's own (int8) order, the first ``--read`` of them scored exactly, as the
store reads and scores them, and their top ten compared with an exact float32
scan's: recall@10 for three kinds of search — the scale benchmark's text
queries (``corpus.queries``), the quality benchmark's paraphrase queries
(``corpus.paraphrase_queries`` for a corpus of the database's size), and
stored memories searched by their own vectors (as the sweep and dedup do).
Prints the build time, recall@10 and the search time (p50 / p95; the load
average with each line: the machine may be shared).

``--threads 2`` links on two threads. usearch 2.26's parallel insertion leaves
a few nodes no search reaches (unum-cloud/USearch#735: a node is found by a
concurrent insertion while its lowest level is still empty); the build then
searches every vector by itself (a walk of 64), searches the ones not found
again with a walk of 4,096, and adds the ones still not found again on one
thread, printing how many and what the check cost.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import time
from pathlib import Path

import numpy as np
from usearch.index import Index

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import paraphrase_queries, queries

FETCH = 196  # what the store asks the graph for recall's pool of 60 (``_want`` and ``_fetch_for``)
READ = 90  # the rows it reads and scores exactly
SAMPLES = 300


def stored_vectors(database: Path) -> tuple[np.ndarray, np.ndarray]:
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as conn:
        rows = conn.execute(
            "SELECT seq, embedding FROM memories WHERE status = 'live' AND embedding IS NOT NULL ORDER BY seq"
        ).fetchall()
    return np.array([r[0] for r in rows], dtype=np.int64), np.stack([np.frombuffer(r[1], np.float32) for r in rows])


def build(
    seqs: np.ndarray, matrix: np.ndarray, connectivity: int, expansion_add: int, threads: int
) -> tuple[Index, float]:
    index = Index(
        ndim=matrix.shape[1], metric="cos", dtype="i8", connectivity=connectivity, expansion_add=expansion_add
    )
    started = time.perf_counter()
    for start in range(0, len(seqs), 5_000):
        index.add(seqs[start : start + 5_000].astype(np.uint64), matrix[start : start + 5_000], threads=threads)
    return index, time.perf_counter() - started


def unreachable(index: Index, seqs: np.ndarray, matrix: np.ndarray, walk: int, count: int) -> np.ndarray:
    """Positions of the vectors a search for their own vector does not return."""
    index.expansion_search = walk
    found = index.search(matrix, count, threads=2)
    return np.flatnonzero(~(np.asarray(found.keys) == seqs.astype(np.uint64)[:, None]).any(axis=1))


def repair(index: Index, seqs: np.ndarray, matrix: np.ndarray) -> tuple[int, int, float]:
    """(not found by a walk of 64, nor by one of 4,096, seconds): the latter are added again on one thread."""
    started = time.perf_counter()
    missed = unreachable(index, seqs, matrix, 64, 10)
    lost = missed[unreachable(index, seqs[missed], matrix[missed], 4_096, 100)] if len(missed) else missed
    if len(lost):
        keys = seqs[lost].astype(np.uint64)
        index.remove(keys)
        index.add(keys, matrix[lost], threads=1)
    return len(missed), len(lost), time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", required=True)
    parser.add_argument("--graphs", default="16:128,32:256")
    parser.add_argument("--expansions", default="256,512,1024,2048")
    parser.add_argument("--read", type=int, default=READ)
    parser.add_argument("--threads", type=int, default=1, help="threads linking the graph (2: checked, repaired)")
    args = parser.parse_args()
    seqs, matrix = stored_vectors(Path(args.home) / "zm.db")
    row_of = {int(seq): n for n, seq in enumerate(seqs)}

    from zero_memory.embedding.usem import UniversalSentenceEncoder

    embedder = UniversalSentenceEncoder()
    subjects = np.random.default_rng(0).choice(len(seqs), SAMPLES, replace=False)
    searches = {
        "queries": embedder.embed(queries(SAMPLES)),
        "paraphrases": embedder.embed([text for text, _ in paraphrase_queries(len(seqs), SAMPLES)]),
        "memories": matrix[subjects],
    }
    truth = {}
    for name, vectors in searches.items():
        scores = vectors @ matrix.T
        if name == "memories":
            scores[np.arange(SAMPLES), subjects] = -np.inf  # a memory is not its own neighbour
        truth[name] = (scores, [set(seqs[np.argsort(-row)[:10]].tolist()) for row in scores])
    print(f"{len(seqs):,} vectors from {args.home}; load average {os.getloadavg()}", flush=True)
    for graph in args.graphs.split(","):
        connectivity, expansion_add = (int(part) for part in graph.split(":"))
        cpu = time.process_time()
        index, build_s = build(seqs, matrix, connectivity, expansion_add, args.threads)
        print(
            f"{connectivity} edges, expansion_add {expansion_add}: built in {build_s:.0f} s on {args.threads} "
            f"thread(s), {time.process_time() - cpu:.0f} CPU-s | load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        if args.threads > 1:
            missed, lost, check_s = repair(index, seqs, matrix)
            print(f"  {missed} not found by a walk of 64, {lost} not by one of 4,096 (added again): {check_s:.0f} s")
        for expansion in (int(e) for e in args.expansions.split(",")):
            index.expansion_search = expansion
            line = []
            for name, vectors in searches.items():
                scores, tops = truth[name]
                recalls, times = [], []
                for n, vector in enumerate(vectors):
                    started = time.perf_counter()
                    found = index.search(vector, FETCH + 1, threads=1)
                    times.append((time.perf_counter() - started) * 1000)
                    keys = np.asarray(found.keys).astype(np.int64)
                    if name == "memories":
                        keys = keys[keys != seqs[subjects[n]]]
                    keys = keys[: args.read]
                    exact = scores[n, [row_of[int(k)] for k in keys]]
                    recalls.append(len(set(keys[np.argsort(-exact)[:10]].tolist()) & tops[n]) / 10)
                line.append(
                    f"{name} {np.mean(recalls):.3f} ({np.median(times):.2f} / {np.percentile(times, 95):.2f} ms)"
                )
            print(f"  expansion {expansion}: " + " | ".join(line) + f" | load {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
