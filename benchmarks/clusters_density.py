"""The clusters' lists and probes: how much of an exact scan's top ten a search finds, and at what cost.

    python benchmarks/clusters_density.py --home DIR [--rows N] [--lists 512,1024] [--probes 96,128,192]
    python benchmarks/clusters_density.py --vectors FILE.npz [--rows N] [--lists ...] [--probes ...] [--cache DIR]

Reads the vectors of a store built by ``scale.py`` or ``quality.py``
(``DIR/zm.db``, read only), or an ``.npz`` of them (``seqs`` and ``matrix``,
float32, as ``--save-vectors FILE.npz`` writes from a home, to skip reading
the database again). ``--rows N`` keeps the first N rows (in ``seq`` order:
the corpus as it was when it held N). For each number of lists (default:
``lists_for`` the rows, as the store chooses) it builds the store's own index
(``store/sqlite/clusters.py``'s ``Clusters``, trained on the store's sample of a few
dozen rows a list, then filed a page of 1,000 rows at a time as the background
build does, on one thread), prints the training and filing time, the CPU
seconds, and the lists' sizes (largest, 99th percentile, median). Then for
each number of probes (default: ``probes_for`` the lists, and its neighbours a
quarter below and half above) it searches one query at a time on one thread.
Each search's hits are taken in the clusters' own (8-bit) order, the first
``--read`` of them scored exactly, as the store reads and scores them, and
their top ten compared with an exact float32 scan's: recall@10 for three kinds
of search — the scale benchmark's text queries (``corpus.queries``), the
quality benchmark's paraphrase queries (``corpus.paraphrase_queries`` for a
corpus of the rows' number), and stored memories searched by their own
vectors, themselves excluded (as the sweep and dedup do; again with the fewer
lists the sweep scans, ``narrow_probes``). Prints recall@10 and the search
time (p50 / p95), with the load average on each line (the machine may be
shared).

The exact top ten are computed by a scan in chunks (about a minute at a
million rows, with the queries' embedding); ``--cache DIR`` keeps them, with
the query vectors, in ``DIR/<name>-<rows>-truth.npz`` for the next run on the
same rows.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import paraphrase_queries, queries

from zero_memory.store.sqlite.clusters import TRAIN_PER_LIST, Clusters, lists_for, probes_for

READ = 90  # the rows the store reads and scores exactly for recall's pool of 60 (``_want`` of store/sqlite/vectors.py)
SAMPLES = 300
CHUNK = 65_536  # rows scored at a time by the exact scans (a million rows: 2 GB of float32, never squared)
PAGE = 1_000  # rows filed at a time, as the background build does (``clusters_build.PAGE``)
KINDS = ("queries", "paraphrases", "memories")

Searches = dict[str, tuple[np.ndarray, np.ndarray | None]]  # kind: (vectors, the row each must not find, or None)


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


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """The rows scaled to unit length in place, a chunk at a time (a million rows are not copied)."""
    matrix = np.require(matrix, dtype=np.float32, requirements=["C", "W"])
    for start in range(0, len(matrix), CHUNK):
        rows = matrix[start : start + CHUNK]
        rows /= np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
    return matrix


def top_rows(vectors: np.ndarray, matrix: np.ndarray, count: int, skip: np.ndarray | None) -> np.ndarray:
    """Each vector's ``count`` most similar rows by the exact cosine (positions in ``matrix``), most similar
    first; ``skip``: a row each vector must not find (itself), or None."""
    best = np.full((len(vectors), 0), -np.inf, dtype=np.float32)
    where = np.zeros((len(vectors), 0), dtype=np.int64)
    for start in range(0, len(matrix), CHUNK):
        rows = matrix[start : start + CHUNK]
        scores = vectors @ rows.T
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


def searches_and_truth(
    seqs: np.ndarray, matrix: np.ndarray, cache: Path | None
) -> tuple[Searches, dict[str, list[set[int]]]]:
    """The three kinds of search and each one's exact top ten (positions), from ``cache`` when it has them."""
    fingerprint = np.array([len(seqs), int(seqs.sum()), int(seqs[-1])], dtype=np.int64)
    if cache is not None and cache.exists():
        saved = np.load(cache)
        if np.array_equal(saved["fingerprint"], fingerprint):
            searches: Searches = {
                kind: (saved[f"{kind}_vectors"], saved["subjects"] if kind == "memories" else None) for kind in KINDS
            }
            return searches, {kind: [set(row.tolist()) for row in saved[f"{kind}_top"]] for kind in KINDS}
        print(f"{cache} is of other rows: computed again", flush=True)

    from zero_memory.embedding.usem import UniversalSentenceEncoder

    embedder = UniversalSentenceEncoder()
    subjects = np.random.default_rng(0).choice(len(seqs), SAMPLES, replace=False)
    searches = {
        "queries": (unit_rows(embedder.embed(queries(SAMPLES))), None),
        "paraphrases": (unit_rows(embedder.embed([text for text, _ in paraphrase_queries(len(seqs), SAMPLES)])), None),
        "memories": (matrix[subjects], subjects),  # a memory is not its own neighbour
    }
    tops = {kind: top_rows(vectors, matrix, 10, skip)[:, :10] for kind, (vectors, skip) in searches.items()}
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=cache.parent, suffix=".npz", delete=False) as file:
            np.savez(
                file,
                fingerprint=fingerprint,
                subjects=subjects,
                **{f"{kind}_vectors": vectors for kind, (vectors, _) in searches.items()},
                **{f"{kind}_top": top for kind, top in tops.items()},
            )
        os.replace(file.name, cache)
    return searches, {kind: [set(row.tolist()) for row in top] for kind, top in tops.items()}


def build(matrix: np.ndarray, lists: int) -> tuple[Clusters, float, float, float]:
    """The store's index of the rows (keyed by position), and the seconds training and filing took and their
    CPU seconds: trained on the store's sample (``VectorIndex._sample``), filed a page at a time."""
    size = min(len(matrix), lists * TRAIN_PER_LIST)
    sample = matrix[np.sort(np.random.default_rng(len(matrix)).choice(len(matrix), size, replace=False))]
    cpu, started = time.process_time(), time.perf_counter()
    clusters = Clusters.trained(sample, lists=lists)
    trained = time.perf_counter() - started
    for start in range(0, len(matrix), PAGE):
        clusters.add(np.arange(start, min(start + PAGE, len(matrix))), matrix[start : start + PAGE])
    return clusters, trained, time.perf_counter() - started - trained, time.process_time() - cpu


def list_sizes(clusters: Clusters) -> np.ndarray:
    # The class does not tell how its rows spread over the lists; faiss's inverted lists do.
    invlists = clusters._index.invlists
    return np.array([invlists.list_size(n) for n in range(clusters.lists)])


def measure(
    clusters: Clusters,
    probes: list[int],
    searches: Searches,
    truth: dict[str, list[set[int]]],
    matrix: np.ndarray,
    read: int,
) -> None:
    for probe in probes:
        line = [searched(clusters, probe, kind, searches[kind], truth[kind], matrix, read) for kind in searches]
        print(f"  probes {probe}: " + " | ".join(line) + f" | load {os.getloadavg()[0]:.1f}", flush=True)
    narrow = clusters.narrow_probes
    line = [searched(clusters, narrow, "memories", searches["memories"], truth["memories"], matrix, read)]
    print(
        f"  probes {narrow} (the sweep's narrow_probes): " + line[0] + f" | load {os.getloadavg()[0]:.1f}", flush=True
    )


def searched(
    clusters: Clusters,
    probes: int,
    kind: str,
    search: tuple[np.ndarray, np.ndarray | None],
    truth: list[set[int]],
    matrix: np.ndarray,
    read: int,
) -> str:
    """recall@10 and the search time of one kind of search, one vector at a time."""
    vectors, skip = search
    recalls, times = [], []
    for n, vector in enumerate(vectors):
        started = time.perf_counter()
        keys, _ = clusters.search(vector, read + 1, probes=probes)
        times.append((time.perf_counter() - started) * 1000)
        hits = keys[0][keys[0] >= 0]
        if skip is not None:
            hits = hits[hits != skip[n]]
        recalls.append(len(exact_ten(vector, matrix, hits[:read]) & truth[n]) / 10)
    return f"{kind} {np.mean(recalls):.3f} ({np.median(times):.2f} / {np.percentile(times, 95):.2f} ms)"


def default_probes(lists: int) -> list[int]:
    """``probes_for`` the lists, and its neighbours a quarter below and half above."""
    chosen = probes_for(lists)
    return sorted({max(1, chosen * 3 // 4), chosen, min(lists, chosen * 3 // 2)})


def numbers(text: str | None) -> list[int] | None:
    return [int(part) for part in text.split(",")] if text else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--home", help="a store's home: its zm.db is read, read only")
    source.add_argument("--vectors", help="an .npz of the vectors (seqs, matrix), as --save-vectors writes")
    parser.add_argument("--save-vectors", metavar="FILE.npz", help="with --home: also write its vectors there")
    parser.add_argument("--rows", type=int, help="the first N rows only (default: all)")
    parser.add_argument("--lists", help="numbers of lists, comma-separated (default: lists_for the rows)")
    parser.add_argument("--probes", help="lists scanned, comma-separated (default: probes_for and neighbours)")
    parser.add_argument("--read", type=int, default=READ)
    parser.add_argument("--cache", help="a directory keeping each run's exact top ten for the next")
    args = parser.parse_args()
    started = time.perf_counter()
    if args.home:
        name = Path(args.home).name
        seqs, matrix = stored_vectors(Path(args.home) / "zm.db")
        if args.save_vectors:
            np.savez(args.save_vectors, seqs=seqs, matrix=matrix)
    else:
        name = Path(args.vectors).stem.removesuffix("-vectors")
        with np.load(args.vectors) as saved:
            seqs, matrix = saved["seqs"], saved["matrix"]
    if args.rows:
        if args.rows > len(seqs):
            raise SystemExit(f"--rows {args.rows}: there are {len(seqs):,} rows")
        seqs, matrix = seqs[: args.rows], matrix[: args.rows]
    matrix = unit_rows(matrix)
    loaded = time.perf_counter() - started
    cache = Path(args.cache) / f"{name}-{len(seqs)}-truth.npz" if args.cache else None
    searches, truth = searches_and_truth(seqs, matrix, cache)
    print(
        f"{len(seqs):,} vectors from {args.home or args.vectors} (loaded in {loaded:.0f} s), exact top ten in "
        f"{time.perf_counter() - started - loaded:.0f} s; load average {os.getloadavg()}",
        flush=True,
    )
    for lists in numbers(args.lists) or [lists_for(len(seqs))]:
        clusters, trained, filed, cpu = build(matrix, lists)
        sizes = list_sizes(clusters)
        print(
            f"{clusters.lists} lists: trained in {trained:.1f} s, filed in {filed:.1f} s ({cpu:.0f} CPU-s); "
            f"list sizes max {sizes.max()} / p99 {np.percentile(sizes, 99):.0f} / median {np.median(sizes):.0f} "
            f"| load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        measure(clusters, numbers(args.probes) or default_probes(clusters.lists), searches, truth, matrix, args.read)


if __name__ == "__main__":
    main()
