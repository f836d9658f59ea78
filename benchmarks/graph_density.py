"""The graph's density and search expansion: how much of an exact scan's top ten a search finds, and at what cost.

    python benchmarks/graph_density.py --home DIR [--graphs 16:128,32:256] [--expansions 256,512,1024,2048]
        [--threads 2]
    python benchmarks/graph_density.py --home DIR --snapshot [--expansions 640,1024,2048,4096] [--ceiling]

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

``--snapshot`` measures the graph the store saved next to the database
(``DIR/zm.db-index/``, the newest snapshot) instead of building one: a
graph that took the store most of an hour to link at a million memories can
be walked at any expansion without linking it again.

``--ceiling`` also prints what a perfect walk would find: the first ``--read``
rows in the graph's int8 order over every row (usearch's int8 rows and
cosine, computed by a scan) scored exactly. A walk finds at most that; when
the ceiling is far above what the walks find, a wider walk or a denser graph
can close the gap; when it is not, the int8 order is what limits.

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
CHUNK = 65_536  # rows scored at a time by the exact scans (a million rows: 2 GB of float32, never squared)


def stored_vectors(database: Path) -> tuple[np.ndarray, np.ndarray]:
    seqs: list[int] = []
    chunks = []
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as conn:
        cursor = conn.execute(
            "SELECT seq, embedding FROM memories WHERE status = 'live' AND embedding IS NOT NULL ORDER BY seq"
        )
        while rows := cursor.fetchmany(CHUNK):
            seqs.extend(row[0] for row in rows)
            chunks.append(np.frombuffer(b"".join(row[1] for row in rows), dtype=np.float32).reshape(len(rows), -1))
    return np.array(seqs, dtype=np.int64), np.concatenate(chunks)


def int8_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows as usearch stores them (each of unit length times 127, truncated to int8), of unit length again:
    the graph's cosine is their product."""
    stored = np.trunc(vectors / np.linalg.norm(vectors, axis=1, keepdims=True) * 127).astype(np.float32)
    return stored / np.maximum(np.linalg.norm(stored, axis=1, keepdims=True), 1e-12)


def top_rows(vectors: np.ndarray, matrix: np.ndarray, count: int, skip: np.ndarray | None, int8: bool) -> np.ndarray:
    """Each vector's ``count`` most similar rows (positions in ``matrix``), most similar first: by the exact
    cosine, or by the graph's int8 one; ``skip``: a row each vector must not find (itself), or None."""
    probes = int8_rows(vectors) if int8 else vectors
    best = np.full((len(vectors), 0), -np.inf, dtype=np.float32)
    where = np.zeros((len(vectors), 0), dtype=np.int64)
    for start in range(0, len(matrix), CHUNK):
        rows = matrix[start : start + CHUNK]
        scores = probes @ (int8_rows(rows) if int8 else rows).T
        if skip is not None:
            inside = (skip >= start) & (skip < start + len(rows))
            scores[np.flatnonzero(inside), skip[inside] - start] = -np.inf
        best = np.hstack([best, scores])
        where = np.hstack([where, np.broadcast_to(np.arange(start, start + len(rows)), scores.shape)])
        if best.shape[1] > count:
            kept = np.argpartition(-best, count - 1, axis=1)[:, :count]
            best, where = np.take_along_axis(best, kept, axis=1), np.take_along_axis(where, kept, axis=1)
    order = np.argsort(-best, axis=1, kind="stable")
    return np.take_along_axis(where, order, axis=1)


def exact_ten(vector: np.ndarray, matrix: np.ndarray, positions: np.ndarray) -> set[int]:
    """The ten of these rows most similar to the vector, by the exact cosine (positions)."""
    scores = matrix[positions] @ vector
    return set(positions[np.argsort(-scores, kind="stable")[:10]].tolist())


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


def snapshot_graph(home: Path) -> tuple[Index, str]:
    """The newest snapshot the store saved next to ``home``'s database, and its name."""
    from zero_memory.store.index_files import IndexFiles

    snapshots = IndexFiles(home / "zm.db").snapshots()
    if not snapshots:
        raise SystemExit(f"no snapshot in {home / 'zm.db-index'}: a first search on the store builds one")
    index = Index.restore(os.fspath(snapshots[0].path))
    if index is None:
        raise SystemExit(f"{snapshots[0].path} is not a usearch index")
    return index, snapshots[0].name


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


def measure(
    index: Index,
    expansions: list[int],
    searches: dict[str, tuple[np.ndarray, np.ndarray | None]],
    truth: dict[str, list[set[int]]],
    seqs: np.ndarray,
    matrix: np.ndarray,
    read: int,
) -> None:
    position = np.full(int(seqs.max()) + 1, -1, dtype=np.int64)
    position[seqs] = np.arange(len(seqs))
    for expansion in expansions:
        index.expansion_search = expansion
        line = []
        for name, (vectors, skip) in searches.items():
            recalls, times = [], []
            for n, vector in enumerate(vectors):
                started = time.perf_counter()
                found = index.search(vector, max(FETCH + 1, read + 1), threads=1)
                times.append((time.perf_counter() - started) * 1000)
                keys = np.asarray(found.keys).astype(np.int64)
                hits = position[keys[(keys >= 0) & (keys < len(position))]]
                hits = hits[hits >= 0]
                if skip is not None:
                    hits = hits[hits != skip[n]]
                recalls.append(len(exact_ten(vector, matrix, hits[:read]) & truth[name][n]) / 10)
            line.append(f"{name} {np.mean(recalls):.3f} ({np.median(times):.2f} / {np.percentile(times, 95):.2f} ms)")
        print(f"  expansion {expansion}: " + " | ".join(line) + f" | load {os.getloadavg()[0]:.1f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", required=True)
    parser.add_argument("--graphs", default="16:128,32:256")
    parser.add_argument("--snapshot", action="store_true", help="walk the store's saved graph; build none")
    parser.add_argument("--expansions", default="256,512,1024,2048")
    parser.add_argument("--read", type=int, default=READ)
    parser.add_argument("--ceiling", action="store_true", help="also what a perfect walk of an int8 graph finds")
    parser.add_argument("--threads", type=int, default=1, help="threads linking the graph (2: checked, repaired)")
    args = parser.parse_args()
    home = Path(args.home)
    started = time.perf_counter()
    seqs, matrix = stored_vectors(home / "zm.db")
    expansions = [int(e) for e in args.expansions.split(",")]

    from zero_memory.embedding.usem import UniversalSentenceEncoder

    embedder = UniversalSentenceEncoder()
    subjects = np.random.default_rng(0).choice(len(seqs), SAMPLES, replace=False)
    searches: dict[str, tuple[np.ndarray, np.ndarray | None]] = {
        "queries": (embedder.embed(queries(SAMPLES)), None),
        "paraphrases": (embedder.embed([text for text, _ in paraphrase_queries(len(seqs), SAMPLES)]), None),
        "memories": (matrix[subjects], subjects),  # a memory is not its own neighbour
    }
    truth = {
        name: [set(row[:10].tolist()) for row in top_rows(vectors, matrix, 10, skip, int8=False)]
        for name, (vectors, skip) in searches.items()
    }
    print(
        f"{len(seqs):,} vectors from {args.home}, exact top ten in {time.perf_counter() - started:.0f} s; "
        f"load average {os.getloadavg()}",
        flush=True,
    )
    if args.ceiling:
        line = []
        for name, (vectors, skip) in searches.items():
            int8_order = top_rows(vectors, matrix, args.read, skip, int8=True)
            found = [
                exact_ten(v, matrix, row) & truth[name][n]
                for n, (v, row) in enumerate(zip(vectors, int8_order, strict=True))
            ]
            line.append(f"{name} {np.mean([len(f) / 10 for f in found]):.3f}")
        print(f"  a perfect walk (the int8 order's first {args.read} over every row): " + " | ".join(line), flush=True)
    if args.snapshot:
        index, name = snapshot_graph(home)
        print(f"{name}: {len(index):,} rows, {index.connectivity} edges a node | load {os.getloadavg()[0]:.1f}")
        measure(index, expansions, searches, truth, seqs, matrix, args.read)
        return
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
        measure(index, expansions, searches, truth, seqs, matrix, args.read)


if __name__ == "__main__":
    main()
