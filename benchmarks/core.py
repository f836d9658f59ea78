"""Core benchmark: bulk import, remember and recall on corpora of 1k, 10k and 100k memories.

    python benchmarks/core.py [--sizes 1000,10000,100000] [--database-url URL] [--json]

Each size runs in its own process on a fresh database (SQLite in a temporary
directory unless --database-url names a PostgreSQL server; each size then
gets a fresh database on it), so peak RSS is per size. Prints remember p50/p95
(with embedding, dedup probe and audit), import memories/s, recall p50/p95
(with query embedding), and peak RSS.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import memories, queries

REMEMBER_SAMPLES = 200
RECALL_SAMPLES = 300


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def run_size(size: int, database_url: str | None, out: Any) -> None:
    from zero_memory.access.caller import Caller
    from zero_memory.access.users import add_user
    from zero_memory.bootstrap import build_app
    from zero_memory.memory.imports import import_path
    from zero_memory.memory.models import RememberRequest
    from zero_memory.memory.recall import recall
    from zero_memory.memory.write import remember
    from zero_memory.settings import Settings

    home = Path(tempfile.mkdtemp(prefix=f"zm-bench-{size}-"))
    env = {"ZM_HOME": str(home)}
    if database_url:
        env["ZM_DATABASE_URL"] = database_url
    app = build_app(Settings.from_environ(env))
    with app.store.tx(write=True) as tx:
        add_user(tx, "bench", is_local=True)
    caller = Caller("bench", client="benchmark")
    app.embedder.embed(["load the model before timing anything"])

    corpus = home / "corpus.jsonl"
    with corpus.open("w") as handle:
        for content, kind in memories(size):
            handle.write(json.dumps({"content": content, "kind": kind}) + "\n")
    started = time.perf_counter()
    report = import_path(app, caller, corpus, scope="personal")
    import_seconds = time.perf_counter() - started
    assert report.imported == size, report.to_dict()

    remember_ms = []
    for n, (content, kind) in enumerate(memories(REMEMBER_SAMPLES, seed=99)):
        request = RememberRequest(content=f"{content} (sample {n})", kind=kind, scope="personal")  # type: ignore[arg-type]
        started = time.perf_counter()
        remember(app, caller, request)
        remember_ms.append((time.perf_counter() - started) * 1000)

    recall_ms = []
    for query in queries(RECALL_SAMPLES):
        started = time.perf_counter()
        recall(app, caller, query, limit=10, channel=None)
        recall_ms.append((time.perf_counter() - started) * 1000)

    app.close()
    out.put(
        {
            "size": size,
            "backend": app.store.backend,
            "import_per_s": round(size / import_seconds, 1),
            "remember_p50_ms": round(statistics.median(remember_ms), 2),
            "remember_p95_ms": round(percentile(remember_ms, 95), 2),
            "recall_p50_ms": round(statistics.median(recall_ms), 2),
            "recall_p95_ms": round(percentile(recall_ms, 95), 2),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        }
    )


def fresh_database(url: str, size: int) -> str:
    """A new empty PostgreSQL database on the server ``url`` names."""
    import psycopg

    name = f"zm_bench_{size}_{int(time.time())}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--database-url", default=None, help="a PostgreSQL server URL (default: SQLite)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    context = multiprocessing.get_context("spawn")
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        url = fresh_database(args.database_url, size) if args.database_url else None
        queue = context.Queue()
        process = context.Process(target=run_size, args=(size, url, queue))
        process.start()
        rows.append(queue.get())
        process.join()
        if not args.json:
            row = rows[-1]
            print(
                f"{row['backend']:>8} {row['size']:>7} memories: import {row['import_per_s']:>7}/s | "
                f"remember p50 {row['remember_p50_ms']:>6} ms p95 {row['remember_p95_ms']:>6} ms | "
                f"recall p50 {row['recall_p50_ms']:>6} ms p95 {row['recall_p95_ms']:>6} ms | "
                f"peak RSS {row['peak_rss_mb']:>6} MB",
                flush=True,
            )
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
