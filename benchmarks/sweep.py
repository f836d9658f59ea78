"""Hygiene sweep benchmark: candidate generation through the clusters index beside the exact scan, and a routine sweep.

    python benchmarks/sweep.py [--size 100000] [--subjects 10000] [--new 1000] [--home DIR] [--json]

On one corpus of --size memories (built, or reused with --home), each in its
own process:

1. clusters: candidate generation (nearest neighbours above the sweep floor, at
   most 3 per subject, subjects in batches) for the --subjects newest
   memories through the store's vector index; the pre-judge filters; the
   whole pair scan (judge, route, act) with a fake judge that answers
   "unrelated" at once.
2. exact: the same candidate generation with the exact scan (the floor), and
   how many of its pairs the clusters found.
3. routine: --new memories are written, then a routine sweep's subjects (the
   memories created or touched since just before) get their candidates: the
   index catches up with the new rows and searches only for them, so this
   cost follows the new writes, not the corpus.

Each phase prints the load average, and the generation its CPU time (every
thread of the process) beside the wall time: on a shared machine the CPU time
is the steadier figure.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import memories

OWNER = "bench"
EXACT = {"ann_min_rows": 10**12}


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def open_app(home: Path, index_options: dict[str, int] | None = None) -> Any:
    from zero_memory.bootstrap import build_app
    from zero_memory.judge.fake import FakeJudge
    from zero_memory.settings import Settings
    from zero_memory.store.sqlite.adapter import SQLiteStore

    settings = Settings.from_environ({"ZM_HOME": str(home)})
    store = SQLiteStore.open(settings.database_url, dim=512, **(index_options or {}))
    judge = FakeJudge(default="unrelated")
    return build_app(settings, store=store, judge_factory=lambda owner, run_id: judge), judge


def build(home: Path, size: int, out: Any) -> None:
    from zero_memory.access.caller import Caller
    from zero_memory.access.users import add_user
    from zero_memory.memory.imports import import_path

    app, _ = open_app(home)
    with app.store.tx(write=True) as tx:
        if tx.get_user(OWNER) is None:
            add_user(tx, OWNER, is_local=True)
        existing = tx.count_memories(owner=OWNER)
    if existing < size:
        corpus = home / "corpus.jsonl"
        with corpus.open("w") as handle:
            for content, kind in memories(size):
                handle.write(json.dumps({"content": content, "kind": kind}) + "\n")
        import_path(app, Caller(OWNER, client="benchmark"), corpus, scope="personal")
        corpus.unlink()
    with app.store.tx() as tx:
        corpus_size = tx.count_memories(owner=OWNER)
    app.close()
    out.put({"corpus": corpus_size})


def generation(home: Path, config: str, subjects_count: int, full_scan: bool, out: Any) -> None:
    from zero_memory.access.project_identity import project_paths
    from zero_memory.hygiene import filters
    from zero_memory.hygiene.candidates import pairs
    from zero_memory.hygiene.runs import Tally
    from zero_memory.hygiene.scan import ScanOptions, scan_pairs

    started_load = load()
    app, judge = open_app(home, EXACT if config == "exact" else None)
    settings = app.settings.hygiene
    started = time.perf_counter()
    with app.store.tx() as tx:
        subjects = tx.live_memories(owner=OWNER, limit=subjects_count, newest_first=True)
        tx.similar(app.embedder.embed(["warm the index"])[0], floor=0.0, limit=1, owner=OWNER)
    app.store.wait_for_index()  # without a snapshot, until the clusters built on a thread are searched
    warm = time.perf_counter() - started
    started, cpu = time.perf_counter(), time.process_time()
    with app.store.tx() as tx:
        candidates = list(pairs(tx, subjects, floor=settings.sweep_similarity, limit=settings.sweep_max_candidates))
    generation_s, generation_cpu_s = time.perf_counter() - started, time.process_time() - cpu
    row: dict[str, Any] = {
        "phase": config,
        "subjects": len(subjects),
        "pairs": len(candidates),
        "open_and_warm_s": round(warm, 2),
        "generation_s": round(generation_s, 2),
        "generation_cpu_s": round(generation_cpu_s, 2),
        "subjects_per_s": round(len(subjects) / generation_s, 1),
        "pair_keys": sorted(c.key for c in candidates),
    }
    if config == "clusters" and full_scan:
        started = time.perf_counter()
        with app.store.tx() as tx:
            paths = project_paths(tx, OWNER)
            kept = [c for c in candidates if filters.screen(tx, c, judge.model, paths) is None]
        row["filtering_s"] = round(time.perf_counter() - started, 2)
        row["pairs_to_judge"] = len(kept)
        started = time.perf_counter()
        scan_pairs(app, OWNER, candidates, Tally(), ScanOptions(), None)
        row["full_scan_s"] = round(time.perf_counter() - started, 2)
    app.close()
    row["peak_rss_mb"] = peak_rss_mb()
    row["load"] = f"{started_load} → {load()}"
    out.put(row)


def routine(home: Path, new: int, out: Any) -> None:
    from zero_memory.access.caller import Caller
    from zero_memory.hygiene.candidates import pairs, recent_subjects
    from zero_memory.memory.imports import import_path

    started_load = load()
    app, _ = open_app(home)
    settings = app.settings.hygiene
    with app.store.tx() as tx:
        tx.similar(app.embedder.embed(["warm the index"])[0], floor=0.0, limit=1, owner=OWNER)
    app.store.wait_for_index()
    since = app.clock() - timedelta(seconds=1)
    fresh = home / "fresh.jsonl"
    stamp = int(time.time())
    with fresh.open("w") as handle:
        for content, kind in memories(new, seed=stamp):
            handle.write(json.dumps({"content": f"{content} (written {stamp})", "kind": kind}) + "\n")
    import_path(app, Caller(OWNER, client="benchmark"), fresh, scope="personal")
    fresh.unlink()
    started = time.perf_counter()
    with app.store.tx() as tx:
        subjects = recent_subjects(tx, OWNER, since)
    subjects_s = time.perf_counter() - started
    started = time.perf_counter()
    with app.store.tx() as tx:
        tx.similar(app.embedder.embed(["catch up"])[0], floor=0.0, limit=1, owner=OWNER)
    catch_up_s = time.perf_counter() - started
    started, cpu = time.perf_counter(), time.process_time()
    with app.store.tx() as tx:
        candidates = list(pairs(tx, subjects, floor=settings.sweep_similarity, limit=settings.sweep_max_candidates))
    generation_s, generation_cpu_s = time.perf_counter() - started, time.process_time() - cpu
    app.close()
    out.put(
        {
            "phase": "routine",
            "new": new,
            "subjects": len(subjects),
            "pairs": len(candidates),
            "subject_query_s": round(subjects_s, 3),
            "index_catch_up_s": round(catch_up_s, 3),
            "generation_s": round(generation_s, 3),
            "generation_cpu_s": round(generation_cpu_s, 3),
            "peak_rss_mb": peak_rss_mb(),
            "load": f"{started_load} → {load()}",
        }
    )


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
    parser.add_argument("--subjects", type=int, default=10_000)
    parser.add_argument("--new", type=int, default=1_000, help="memories written before the routine sweep")
    parser.add_argument("--home", default=None, help="reuse (or create) a data directory")
    parser.add_argument("--no-exact", action="store_true", help="skip the exact-scan floor")
    parser.add_argument("--no-full-scan", action="store_true", help="skip the filters and the fake-judge pair scan")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    home = Path(args.home or tempfile.mkdtemp(prefix="zm-sweep-"))
    home.mkdir(parents=True, exist_ok=True)
    context = multiprocessing.get_context("spawn")
    corpus = run(context, build, home, args.size)["corpus"]
    rows = [run(context, generation, home, "clusters", args.subjects, not args.no_full_scan)]
    if not args.no_exact:
        rows.append(run(context, generation, home, "exact", args.subjects, False))
        found = set(rows[0]["pair_keys"])
        truth = set(rows[1]["pair_keys"])
        rows[1]["clusters_found_share"] = round(len(found & truth) / len(truth), 4) if truth else 1.0
    if args.new:
        rows.append(run(context, routine, home, args.new))
    for row in rows:
        row.pop("pair_keys", None)
        row["corpus"] = corpus
        if not args.json:
            print(" | ".join(f"{k} {v}" for k, v in row.items()), flush=True)
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
