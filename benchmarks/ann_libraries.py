"""ANN library comparison on the benchmark corpus: which index the embedded store uses, and why.

    python benchmarks/ann_libraries.py [--size 100000] [--vectors FILE.npy] [--libraries usearch,faiss,hnswlib]

Embeds ``--size`` synthetic memories with the bundled model (or loads them from
``--vectors``, a float32 .npy file of unit vectors, to re-run without
embedding), then for each library builds an HNSW index with the same graph
parameters and measures: build time, one-at-a-time add throughput (as a
``remember`` adds), query p50/p95 for one vector (k = 40, the over-fetch the
store uses), recall@10 against an exact float32 scan on the corpus queries
and on held-out memories (the sweep's subjects), the process's memory growth,
the size of the saved file, and save/load times. Each library runs in its own
process so memory figures do not mix. Prints one line per library and the
load average.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import memories, queries

M = 16  # graph degree (connectivity)
EF_ADD = 128  # expansion while building
EF_SEARCH = 128  # expansion while searching
FETCH = 40
HELD_OUT = 1_000  # memories added one at a time after the build, then used as queries
SWEEP_SUBJECTS = 2_000  # a batch search of this many memories, 11 neighbours each, two threads


def rss_mb() -> float:
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


class Usearch:
    def __init__(self, dim: int, dtype: str) -> None:
        from usearch.index import Index

        self.dtype = dtype
        self.index = Index(
            ndim=dim, metric="ip", dtype=dtype, connectivity=M, expansion_add=EF_ADD, expansion_search=EF_SEARCH
        )

    def build(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        self.index.add(keys, vectors, threads=2)

    def add_one(self, key: int, vector: np.ndarray) -> None:
        self.index.add(key, vector, threads=1)

    def query(self, vectors: np.ndarray, k: int, threads: int = 1) -> np.ndarray:
        found = self.index.search(vectors, k, threads=threads)
        return np.atleast_2d(found.keys)

    def save(self, path: str) -> None:
        self.index.save(path)

    def load(self, path: str) -> None:
        from usearch.index import Index

        self.index = Index.restore(path)
        self.index.expansion_search = EF_SEARCH  # not kept in the file


class Faiss:
    def __init__(self, dim: int, kind: str) -> None:
        import faiss

        faiss.omp_set_num_threads(2)
        self.faiss = faiss
        if kind == "flat":
            base = faiss.IndexHNSWFlat(dim, M, faiss.METRIC_INNER_PRODUCT)
        else:
            qtype = {"sq8": faiss.ScalarQuantizer.QT_8bit, "fp16": faiss.ScalarQuantizer.QT_fp16}[kind]
            base = faiss.IndexHNSWSQ(dim, qtype, M, faiss.METRIC_INNER_PRODUCT)
        base.hnsw.efConstruction = EF_ADD
        base.hnsw.efSearch = EF_SEARCH
        self.index = base  # positions are the keys: keys are 0..n-1 here

    def build(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        if not self.index.is_trained:
            self.index.train(vectors[:20_000])
        self.index.add(vectors)

    def add_one(self, key: int, vector: np.ndarray) -> None:
        self.faiss.omp_set_num_threads(1)
        self.index.add(vector.reshape(1, -1))

    def query(self, vectors: np.ndarray, k: int, threads: int = 1) -> np.ndarray:
        self.faiss.omp_set_num_threads(threads)
        _, ids = self.index.search(np.atleast_2d(vectors), k)
        return ids

    def save(self, path: str) -> None:
        self.faiss.write_index(self.index, path)

    def load(self, path: str) -> None:
        self.index = self.faiss.read_index(path)
        self.index.hnsw.efSearch = EF_SEARCH


class Hnswlib:
    def __init__(self, dim: int, capacity: int) -> None:
        import hnswlib

        self.dim = dim
        self.capacity = capacity
        self.index = hnswlib.Index(space="ip", dim=dim)
        self.index.init_index(max_elements=capacity, ef_construction=EF_ADD, M=M, allow_replace_deleted=True)
        self.index.set_ef(EF_SEARCH)

    def build(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        self.index.add_items(vectors, keys, num_threads=2)

    def add_one(self, key: int, vector: np.ndarray) -> None:
        self.index.add_items(vector.reshape(1, -1), [key], num_threads=1)

    def query(self, vectors: np.ndarray, k: int, threads: int = 1) -> np.ndarray:
        labels, _ = self.index.knn_query(np.atleast_2d(vectors), k=k, num_threads=threads)
        return labels

    def save(self, path: str) -> None:
        self.index.save_index(path)

    def load(self, path: str) -> None:
        import hnswlib

        self.index = hnswlib.Index(space="ip", dim=self.dim)
        self.index.load_index(path, max_elements=self.capacity, allow_replace_deleted=True)
        self.index.set_ef(EF_SEARCH)


def make(name: str, dim: int, capacity: int) -> Any:
    library, _, variant = name.partition(":")
    if library == "usearch":
        return Usearch(dim, variant or "f32")
    if library == "faiss":
        return Faiss(dim, variant or "flat")
    if library == "hnswlib":
        return Hnswlib(dim, capacity)
    raise SystemExit(f"unknown library {name}")


def recall_at(found: np.ndarray, truth: np.ndarray, k: int = 10) -> float:
    return float(
        np.mean([len(set(f[:k].tolist()) & set(t[:k].tolist())) / k for f, t in zip(found, truth, strict=True)])
    )


def rescored(matrix: np.ndarray, queries_: np.ndarray, candidates: np.ndarray, skip_self: int = -1) -> np.ndarray:
    """The top ten of each query's candidates by exact float32 similarity, as the store ranks them."""
    out = []
    for n, (query, row) in enumerate(zip(queries_, candidates, strict=True)):
        row = row[(row >= 0) & (row < len(matrix)) & (row != skip_self + n)]
        sims = matrix[row] @ query
        out.append(row[np.argsort(-sims, kind="stable")][:10])
    return np.array([np.pad(r, (0, 10 - len(r)), constant_values=-1) for r in out])


def exact(matrix: np.ndarray, queries_: np.ndarray, k: int) -> np.ndarray:
    sims = queries_ @ matrix.T
    top = np.argpartition(-sims, k, axis=1)[:, :k]
    order = np.take_along_axis(sims, top, axis=1).argsort(axis=1)[:, ::-1]
    return np.take_along_axis(top, order, axis=1)


def run(name: str, vectors_path: str, queries_path: str, out: Any) -> None:
    corpus = np.load(vectors_path, mmap_mode="r")
    queries_ = np.load(queries_path)
    n = corpus.shape[0] - HELD_OUT
    base = np.ascontiguousarray(corpus[:n])
    held = np.ascontiguousarray(corpus[n:])
    keys = np.arange(n, dtype=np.uint64)
    before = rss_mb()
    index = make(name, corpus.shape[1], corpus.shape[0])
    started = time.perf_counter()
    index.build(keys, base)
    build_s = time.perf_counter() - started
    started = time.perf_counter()
    for offset, vector in enumerate(held):
        index.add_one(n + offset, vector)
    add_per_s = HELD_OUT / (time.perf_counter() - started)
    memory = rss_mb() - before

    matrix = np.ascontiguousarray(corpus)
    latencies = []
    found = []
    for query in queries_:
        started = time.perf_counter()
        found.append(index.query(query.reshape(1, -1), FETCH)[0])
        latencies.append((time.perf_counter() - started) * 1000)
    truth = exact(matrix, queries_, 10)
    recall_raw = recall_at(np.array(found), truth)
    recall_queries = recall_at(rescored(matrix, queries_, np.array(found)), truth)
    subjects = index.query(held, FETCH, threads=2)
    recall_subjects = recall_at(rescored(matrix, held, subjects, skip_self=n), exact(matrix, held, 11)[:, 1:])
    started = time.perf_counter()
    index.query(base[:SWEEP_SUBJECTS], 11, threads=2)
    sweep_s = time.perf_counter() - started

    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "index.bin")
        started = time.perf_counter()
        index.save(path)
        save_s = time.perf_counter() - started
        size_mb = os.path.getsize(path) / 1e6
        started = time.perf_counter()
        index.load(path)
        load_s = time.perf_counter() - started
        after = recall_at(
            np.array([index.query(q.reshape(1, -1), FETCH)[0] for q in queries_]), exact(matrix, queries_, 10)
        )
    out.put(
        {
            "library": name,
            "build_s": round(build_s, 1),
            "add_per_s": round(add_per_s),
            "query_p50_ms": round(statistics.median(latencies), 3),
            "query_p95_ms": round(percentile(latencies, 95), 3),
            "recall10_raw": round(recall_raw, 4),
            "recall10_queries": round(recall_queries, 4),
            "recall10_subjects": round(recall_subjects, 4),
            "sweep_s": round(sweep_s, 2),
            "memory_mb": round(memory),
            "file_mb": round(size_mb),
            "save_s": round(save_s, 2),
            "load_s": round(load_s, 2),
            "recall10_after_load": round(after, 4),
        }
    )


def embed_corpus(size: int, directory: Path) -> tuple[str, str]:
    from zero_memory.embedding.usem import UniversalSentenceEncoder

    embedder = UniversalSentenceEncoder()
    texts = [content for content, _ in memories(size)]
    matrix = np.zeros((size, embedder.dim), dtype=np.float32)
    for start in range(0, size, 256):
        matrix[start : start + 256] = embedder.embed(texts[start : start + 256])
    vectors_path, queries_path = directory / f"corpus-{size}.npy", directory / "queries.npy"
    np.save(vectors_path, matrix)
    np.save(queries_path, embedder.embed(queries(300)))
    return str(vectors_path), str(queries_path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--vectors", default=None, help="a float32 .npy of unit vectors (skips embedding)")
    parser.add_argument("--queries", default=None, help="a float32 .npy of query vectors (with --vectors)")
    parser.add_argument(
        "--libraries", default="usearch:f32,usearch:f16,usearch:i8,faiss:flat,faiss:sq8,faiss:fp16,hnswlib"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.vectors:
        vectors_path, queries_path = args.vectors, args.queries
    else:
        vectors_path, queries_path = embed_corpus(args.size, Path(tempfile.mkdtemp(prefix="zm-ann-")))
    context = multiprocessing.get_context("spawn")
    print(f"load average before: {os.getloadavg()}", flush=True)
    rows = []
    for name in args.libraries.split(","):
        queue = context.Queue()
        process = context.Process(target=run, args=(name, vectors_path, queries_path, queue))
        process.start()
        row = queue.get()
        process.join()
        row["load_average"] = round(os.getloadavg()[0], 2)
        rows.append(row)
        if args.json:
            continue
        print(
            f"{row['library']:>12}: build {row['build_s']:>6} s | add {row['add_per_s']:>6}/s | "
            f"query p50 {row['query_p50_ms']:>6} ms p95 {row['query_p95_ms']:>6} ms | "
            f"recall@10 raw {row['recall10_raw']:.4f}, rescored {row['recall10_queries']:.4f} (queries) "
            f"{row['recall10_subjects']:.4f} (memories) | {SWEEP_SUBJECTS} subjects {row['sweep_s']:>5} s | "
            f"memory {row['memory_mb']:>5} MB | file {row['file_mb']:>5} MB | "
            f"save {row['save_s']} s load {row['load_s']} s (recall after load {row['recall10_after_load']:.4f}) | "
            f"load avg {row['load_average']}",
            flush=True,
        )
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
