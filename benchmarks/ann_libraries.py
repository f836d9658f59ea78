"""ANN library comparison on the benchmark corpus: which index the embedded store uses, and why.

    python benchmarks/ann_libraries.py [--size 100000] [--vectors FILE.npy --queries FILE.npy]
        [--libraries clusters,usearch:i8,faiss:sq8,hnswlib]

Embeds ``--size`` synthetic memories with the bundled model (or loads them from
``--vectors``, a float32 .npy file of unit vectors, to re-run without
embedding), then for each library builds an index and measures: build time,
one-at-a-time add throughput (as a ``remember`` adds), query p50/p95 for one
vector (k = 40, the over-fetch the store uses), recall@10 against an exact
float32 scan on the corpus queries and on held-out memories (the sweep's
subjects), a batch search of 2,000 memories on two threads (a sweep), the
process's memory growth, the size of the saved file, save/load times, and
removing and replacing memories one at a time (how long each takes, whether
a removed one is still found and a replaced one found by its new vector).
Each library runs in its own process so memory figures do not mix. Prints one
line per library and the load average.

``clusters`` is the store's own index (``store/sqlite/clusters.py``: faiss IVF with
8-bit codes, ``lists_for`` the rows, ``probes_for`` the lists, trained on the
store's sample and filed a page at a time on one thread, as the store builds
it; the memories' searches scan its ``narrow_probes``, as the sweep's do).
The others are HNSW graphs with the same parameters: ``usearch:f32|f16|i8``,
``faiss:flat|sq8|fp16`` (faiss's HNSW; it cannot remove) and ``hnswlib``.
usearch and hnswlib are not dependencies of the store:
``pip install usearch hnswlib`` (or the ``bench`` extra,
``pip install -e '.[bench]'``) to compare them.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import multiprocessing
import os
import queue
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
CHANGED = 500  # memories removed one at a time, and as many others replaced by a new vector
PAGE = 1_000  # rows the store's build files in its clusters at a time
MODULES = {"clusters": "faiss", "usearch": "usearch", "faiss": "faiss", "hnswlib": "hnswlib"}
INSTALL = "pip install usearch hnswlib (or the bench extra: pip install -e '.[bench]')"


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

    def remove(self, key: int) -> None:
        self.index.remove(key)

    def replace(self, key: int, vector: np.ndarray) -> None:
        self.index.remove(key)  # a key is added once: replacing is removing, then adding
        self.index.add(key, vector, threads=1)

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

    remove = None  # faiss's HNSW indexes cannot remove a vector
    replace = None

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

    def remove(self, key: int) -> None:
        self.index.mark_deleted(key)

    def replace(self, key: int, vector: np.ndarray) -> None:
        self.index.add_items(vector.reshape(1, -1), [key], num_threads=1)  # an existing label's vector is updated

    def save(self, path: str) -> None:
        self.index.save_index(path)

    def load(self, path: str) -> None:
        import hnswlib

        self.index = hnswlib.Index(space="ip", dim=self.dim)
        self.index.load_index(path, max_elements=self.capacity, allow_replace_deleted=True)
        self.index.set_ef(EF_SEARCH)


class StoreClusters:
    """The store's own index, built as the store builds it (``VectorIndex._sample``, ``clusters_build``)."""

    def __init__(self, dim: int, capacity: int) -> None:
        from zero_memory.store.sqlite.clusters import lists_for

        self.dim = dim
        self.lists = lists_for(capacity)
        self.index: Any = None

    def build(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        from zero_memory.store.sqlite.clusters import TRAIN_PER_LIST, Clusters

        keys = keys.astype(np.int64)
        size = min(len(keys), self.lists * TRAIN_PER_LIST)
        sample = vectors[np.sort(np.random.default_rng(len(keys)).choice(len(keys), size, replace=False))]
        self.index = Clusters.trained(sample, lists=self.lists)
        for start in range(0, len(keys), PAGE):
            self.index.add(keys[start : start + PAGE], vectors[start : start + PAGE])

    def add_one(self, key: int, vector: np.ndarray) -> None:
        self.index.add(np.array([key], dtype=np.int64), vector.reshape(1, -1))

    def query(self, vectors: np.ndarray, k: int, threads: int = 1) -> np.ndarray:
        keys, _ = self.index.search(np.atleast_2d(vectors), k, threads=threads)
        return keys

    def query_memories(self, vectors: np.ndarray, k: int, threads: int = 1) -> np.ndarray:
        """The sweep's searches for stored memories' neighbours scan fewer lists than a query's."""
        keys, _ = self.index.search(np.atleast_2d(vectors), k, probes=self.index.narrow_probes, threads=threads)
        return keys

    def remove(self, key: int) -> None:
        self.index.remove([key])

    def replace(self, key: int, vector: np.ndarray) -> None:
        self.add_one(key, vector)  # a key already present is replaced

    def save(self, path: str) -> None:
        self.index.save(Path(path))

    def load(self, path: str) -> None:
        from zero_memory.store.sqlite.clusters import Clusters

        self.index = Clusters.restore(Path(path), self.dim)


def make(name: str, dim: int, capacity: int) -> Any:
    library, _, variant = name.partition(":")
    if library == "clusters":
        return StoreClusters(dim, capacity)
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
    # Copies read before the memory is measured: a view of the mapped file would count its pages as the index's.
    base = np.array(corpus[:n])
    held = np.array(corpus[n:])
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
    query_memories = getattr(index, "query_memories", index.query)
    subjects = query_memories(held, FETCH, threads=2)
    recall_subjects = recall_at(rescored(matrix, held, subjects, skip_self=n), exact(matrix, held, 11)[:, 1:])
    started = time.perf_counter()
    query_memories(base[:SWEEP_SUBJECTS], 11, threads=2)
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
    changes = remove_and_replace(index, matrix, n)
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
            **changes,
        }
    )


def remove_and_replace(index: Any, matrix: np.ndarray, n: int) -> dict[str, Any]:
    """Remove ``CHANGED`` memories one at a time, then give as many others a new vector (halfway to another
    memory's): the time each takes, how many removed ones a search for their vector still returns, and the
    share of replaced ones a search for their new vector returns."""
    if index.remove is None:
        return {"remove_ms": None, "replace_ms": None, "removed_found": None, "replaced_found": None}
    removed = np.arange(0, n, n // CHANGED)[:CHANGED]
    replaced = removed + 1
    moved = matrix[replaced] + matrix[(replaced + n // 2) % n]
    moved /= np.linalg.norm(moved, axis=1, keepdims=True)
    started = time.perf_counter()
    for key in removed.tolist():
        index.remove(key)
    remove_ms = (time.perf_counter() - started) * 1000 / CHANGED
    started = time.perf_counter()
    for key, vector in zip(replaced.tolist(), moved, strict=True):
        index.replace(key, vector)
    replace_ms = (time.perf_counter() - started) * 1000 / CHANGED
    still = index.query(matrix[removed], FETCH, threads=2)
    found = index.query(moved, FETCH, threads=2)
    return {
        "remove_ms": round(remove_ms, 3),
        "replace_ms": round(replace_ms, 3),
        "removed_found": int(sum(key in row for key, row in zip(removed, still, strict=True))),
        "replaced_found": round(float(np.mean([key in row for key, row in zip(replaced, found, strict=True)])), 4),
    }


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


def importable(modules: Any) -> list[str]:
    return [module for module in set(modules) if importlib.util.find_spec(module) is not None]


def result_of(process: Any, results: Any, name: str) -> dict[str, Any]:
    """The row a library's process puts, or an exit when the process ends without one."""
    while True:
        try:
            row: dict[str, Any] = results.get(timeout=5)
            return row
        except queue.Empty:
            if not process.is_alive():
                raise SystemExit(f"{name}: the measuring process failed (exit code {process.exitcode})") from None


def changes(row: dict[str, Any]) -> str:
    if row["remove_ms"] is None:
        return "remove/replace: not supported"
    return (
        f"remove {row['remove_ms']} ms, replace {row['replace_ms']} ms "
        f"({row['removed_found']} removed found, {row['replaced_found']:.3f} replaced found)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--vectors", default=None, help="a float32 .npy of unit vectors (skips embedding)")
    parser.add_argument("--queries", default=None, help="a float32 .npy of query vectors (with --vectors)")
    parser.add_argument(
        "--libraries",
        default="clusters,usearch:f32,usearch:f16,usearch:i8,faiss:flat,faiss:sq8,faiss:fp16,hnswlib",
        help="comma-separated: clusters, usearch:f32|f16|i8, faiss:flat|sq8|fp16, hnswlib",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    names = args.libraries.split(",")
    unknown = sorted({name for name in names if name.partition(":")[0] not in MODULES})
    if unknown:
        raise SystemExit(f"unknown libraries: {', '.join(unknown)} (known: {', '.join(MODULES)})")
    missing = sorted({MODULES[name.partition(":")[0]] for name in names} - set(importable(MODULES.values())))
    if missing:
        raise SystemExit(f"not installed: {', '.join(missing)}. To compare them: {INSTALL}")
    if args.vectors and not args.queries:
        raise SystemExit("--vectors needs --queries (a float32 .npy of query vectors)")
    if args.vectors:
        vectors_path, queries_path = args.vectors, args.queries
    else:
        vectors_path, queries_path = embed_corpus(args.size, Path(tempfile.mkdtemp(prefix="zm-ann-")))
    context = multiprocessing.get_context("spawn")
    print(f"load average before: {os.getloadavg()}", flush=True)
    rows = []
    for name in names:
        results = context.Queue()
        process = context.Process(target=run, args=(name, vectors_path, queries_path, results))
        process.start()
        row = result_of(process, results, name)
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
            f"{changes(row)} | load avg {row['load_average']}",
            flush=True,
        )
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
