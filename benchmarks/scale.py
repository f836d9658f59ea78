"""Scale benchmark for the embedded store: import, index, recall — the clusters index beside the exact-scan floor.

    python benchmarks/scale.py --size 100000 [--home DIR] [--queries 300] [--json]
    python benchmarks/scale.py --size 1000000 --home /var/tmp/zm-1m [--import-only]

Phases, each in its own process so that peak RSS is per phase, on one database:

1. import: a fresh data directory gets ``--size`` synthetic memories through
   ``import_path`` (streamed: guard, batched embedding, insert, audit); then
   the first search builds the vector index from the database, and closing
   the store saves its snapshot. Prints import/s, the index build time, the
   disk used (database and index) and the phase's peak RSS. Skipped when
   ``--home`` already holds the corpus. ``--import-only`` stops after the
   import, before the index is built (the next run's first search builds it).
2. clusters: a new process opens the store (the index loads from its snapshot)
   and runs ``--queries`` recalls: the whole call (query embedding, vector
   search, full text, fusion) and, separately, the vector part (``similar``
   over the caller's read set with recall's pool size and floor, the query
   already embedded), after one untimed pass over the queries. Peak RSS.
3. exact: the same on the same database with the exact scan (the floor), and
   the vector recall@10 of the clusters against it: on the queries, on 300
   paraphrase queries of the quality benchmark (``corpus.paraphrase_queries``,
   aimed at its notes: run with ``--home`` on a copy of ``quality.py``'s
   database of the same size to measure them on the corpus they were written
   for), and on 300 stored memories searched by their own vectors (as the
   sweep does).

Recall runs with ``channel=None`` (no surfacings are written), so that every
configuration reads the same database. The load average is printed with
each phase: the machine is shared; compare the phases of one run.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import memories, paraphrase_queries, queries

OWNER = "bench"
EXACT = {"ann_min_rows": 10**12}
SUBJECT_SAMPLES = 300


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def folder_mb(path: Path) -> float:
    if path.is_file():
        return path.stat().st_size / 1e6
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6 if path.exists() else 0.0


def open_app(home: Path, index_options: dict[str, int] | None = None) -> Any:
    from zero_memory.bootstrap import build_app
    from zero_memory.settings import Settings
    from zero_memory.store.sqlite.adapter import SQLiteStore

    settings = Settings.from_environ({"ZM_HOME": str(home)})
    store = SQLiteStore.open(settings.database_url, dim=512, **(index_options or {}))
    return build_app(settings, store=store)


def import_phase(home: Path, size: int, build_index: bool, out: Any) -> None:
    from zero_memory.access.caller import Caller
    from zero_memory.access.users import add_user
    from zero_memory.memory.imports import import_path

    started_load = load()
    app = open_app(home)
    with app.store.tx(write=True) as tx:
        if tx.get_user(OWNER) is None:
            add_user(tx, OWNER, is_local=True)
    app.embedder.embed(["load the model before timing anything"])
    corpus = home / "corpus.jsonl"
    with corpus.open("w") as handle:
        for content, kind in memories(size):
            handle.write(json.dumps({"content": content, "kind": kind}) + "\n")
    started = time.perf_counter()
    report = import_path(app, Caller(OWNER, client="benchmark"), corpus, scope="personal")
    import_s = time.perf_counter() - started
    corpus.unlink()
    assert report.imported == size, report.to_dict()
    import_rss = peak_rss_mb()
    started = time.perf_counter()
    if build_index:
        with app.store.tx() as tx:
            tx.similar(app.embedder.embed(["build the index"])[0], floor=0.0, limit=1)
        app.store.wait_for_index()  # the clusters are built on a thread while the first searches scan the rows
    build_s = time.perf_counter() - started
    started = time.perf_counter()
    app.close()
    save_s = time.perf_counter() - started
    database = home / "zm.db"
    out.put(
        {
            "phase": "import",
            "load": f"{started_load} → {load()}",
            "import_per_s": round(size / import_s, 1),
            "import_s": round(import_s, 1),
            "import_peak_rss_mb": import_rss,
            "index_build_s": round(build_s, 1) if build_index else None,
            "index_save_s": round(save_s, 1),
            "database_mb": round(sum(folder_mb(Path(f"{database}{s}")) for s in ("", "-wal", "-shm")), 1),
            "index_mb": round(folder_mb(Path(f"{database}-index")), 1),
            "peak_rss_mb": peak_rss_mb(),
        }
    )


def recall_phase(home: Path, config: str, size: int, count: int, index_hits: dict[str, Any] | None, out: Any) -> None:
    from zero_memory.access.caller import Caller
    from zero_memory.access.visibility import visibility
    from zero_memory.memory.recall import recall

    started_load = load()
    app = open_app(home, EXACT if config == "exact" else None)
    caller = Caller(OWNER, client="benchmark")
    texts = queries(count)
    vectors = app.embedder.embed(texts)
    config_ = app.settings.hygiene
    started = time.perf_counter()
    with app.store.tx() as tx:
        readable = sorted(visibility(tx, OWNER).readable)
        tx.similar(vectors[0], floor=0.0, limit=1)
    app.store.wait_for_index()  # without a snapshot, until the clusters built on a thread are searched
    open_s = time.perf_counter() - started
    with app.store.tx() as tx:
        subjects = tx.live_memories(owner=OWNER, limit=SUBJECT_SAMPLES, newest_first=True)
        subject_vectors = tx.memory_vectors([m.id for m in subjects])
    # Once through the queries untimed: the rows they read come from the OS's page cache in every phase,
    # as on a server that has been answering for a while, rather than from disk in the first one timed.
    for text in texts:
        recall(app, caller, text, limit=10, channel=None)

    vector_ms, top10, paraphrase_top, subject_top = [], [], [], []
    for vector in vectors:
        started = time.perf_counter()
        with app.store.tx() as tx:
            found = tx.similar(
                vector, floor=config_.recall_similarity, limit=config_.recall_candidates, scopes=readable
            )
        vector_ms.append((time.perf_counter() - started) * 1000)
        top10.append([n.memory.id for n in found[:10]])
    for vector in app.embedder.embed([text for text, _ in paraphrase_queries(size, count)]):
        with app.store.tx() as tx:
            found = tx.similar(
                vector, floor=config_.recall_similarity, limit=config_.recall_candidates, scopes=readable
            )
        paraphrase_top.append([n.memory.id for n in found[:10]])
    for subject in subjects:
        with app.store.tx() as tx:
            found = tx.similar(subject_vectors[subject.id], floor=-1.0, limit=10, owner=OWNER, exclude=[subject.id])
        subject_top.append([n.memory.id for n in found])
    embed_ms = []
    for text in texts:
        started = time.perf_counter()
        app.embedder.embed([text])
        embed_ms.append((time.perf_counter() - started) * 1000)
    recall_ms = []
    for text in texts:
        started = time.perf_counter()
        recall(app, caller, text, limit=10, channel=None)
        recall_ms.append((time.perf_counter() - started) * 1000)
    app.close()
    row: dict[str, Any] = {
        "phase": config,
        "load": f"{started_load} → {load()}",
        "first_search_s": round(open_s, 2),
        "recall_p50_ms": round(statistics.median(recall_ms), 2),
        "recall_p95_ms": round(percentile(recall_ms, 95), 2),
        "vector_p50_ms": round(statistics.median(vector_ms), 2),
        "vector_p95_ms": round(percentile(vector_ms, 95), 2),
        "embed_p50_ms": round(statistics.median(embed_ms), 2),
        "peak_rss_mb": peak_rss_mb(),
        "top10": top10,
        "paraphrase_top10": paraphrase_top,
        "subject_top10": subject_top,
    }
    if index_hits is not None:
        row["recall10_queries"] = round(_overlap(index_hits["top10"], top10), 4)
        row["recall10_paraphrases"] = round(_overlap(index_hits["paraphrase_top10"], paraphrase_top), 4)
        row["recall10_memories"] = round(_overlap(index_hits["subject_top10"], subject_top), 4)
    out.put(row)


def _overlap(found: list[list[str]], truth: list[list[str]]) -> float:
    scores = [len(set(f) & set(t)) / len(t) for f, t in zip(found, truth, strict=True) if t]
    return statistics.mean(scores) if scores else 1.0


def run(context: Any, target: Any, *args: Any) -> dict[str, Any]:
    queue = context.Queue()
    process = context.Process(target=target, args=(*args, queue))
    process.start()
    row: dict[str, Any] = queue.get()
    process.join()
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--home", default=None, help="reuse (or create) a data directory")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--import-only", action="store_true", help="import, then stop: a later run's first search builds the index"
    )
    args = parser.parse_args()
    home = Path(args.home or tempfile.mkdtemp(prefix=f"zm-scale-{args.size}-"))
    home.mkdir(parents=True, exist_ok=True)
    context = multiprocessing.get_context("spawn")
    rows = []
    if not (home / "zm.db").exists():
        rows.append(run(context, import_phase, home, args.size, not args.import_only))
        _print(rows[-1], args.json)
    if args.import_only:
        return
    clusters = run(context, recall_phase, home, "clusters", args.size, args.queries, None)
    _print(clusters, args.json)
    exact = run(context, recall_phase, home, "exact", args.size, args.queries, clusters)
    _print(exact, args.json)
    rows += [clusters, exact]
    if args.json:
        print(json.dumps([{k: v for k, v in r.items() if "top10" not in k} for r in rows], indent=2))


def _print(row: dict[str, Any], as_json: bool) -> None:
    if as_json:
        return
    shown = {k: v for k, v in row.items() if "top10" not in k or k.startswith("recall")}
    print(" | ".join(f"{k} {v}" for k, v in shown.items()), flush=True)


if __name__ == "__main__":
    main()
