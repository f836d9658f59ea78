"""A first start without an index snapshot: how soon searches answer, how fast while the clusters are built, and after.

    python benchmarks/first_start.py --home DIR [--queries 300] [--building-seconds S]

DIR is a copy of a ``scale.py`` home (its ``zm.db-index`` folder is removed:
use a copy). One process opens the store as a server would and searches with
recall's pool and floor over the caller's read set, the queries already
embedded: the first search (which reads every row), then the corpus's
queries in turn while the clusters are built on their thread, until the index
takes them, then the same queries on the clusters. Prints the time to the
first answer, search p50 / p95 during the build and after, the time until the
clusters are searched, peak RSS and the load average. ``--building-seconds S``
stops after S seconds of searches during the build: the store is closed and
the build stopped.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import queries
from scale import OWNER, load, open_app, peak_rss_mb, percentile


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", required=True)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--building-seconds", type=float, default=None, help="stop searching during the build")
    args = parser.parse_args()
    home = Path(args.home)
    shutil.rmtree(home / "zm.db-index", ignore_errors=True)

    from zero_memory.access.visibility import visibility

    started_load = load()
    app = open_app(home)
    config = app.settings.hygiene
    vectors = app.embedder.embed(queries(args.queries))

    with app.store.tx() as tx:
        readable = sorted(visibility(tx, OWNER).readable)

    def search(vector: object) -> float:
        started = time.perf_counter()
        with app.store.tx() as tx:
            tx.similar(vector, floor=config.recall_similarity, limit=config.recall_candidates, scopes=readable)
        return (time.perf_counter() - started) * 1000

    opened = time.perf_counter()
    first_ms = search(vectors[0])
    during: list[float] = []
    deadline = opened + args.building_seconds if args.building_seconds else float("inf")
    while app.store.index.building and time.perf_counter() < deadline:
        during.append(search(vectors[len(during) % len(vectors)]))
    built_s = time.perf_counter() - opened
    after = [] if app.store.index.building else [search(vector) for vector in vectors]
    building_rss = peak_rss_mb()
    app.close()
    row = {
        "load": f"{started_load} → {load()}",
        "first_answer_s": round(first_ms / 1000, 2),
        "searches_while_building": len(during),
        "building_p50_ms": round(statistics.median(during), 2) if during else None,
        "building_p95_ms": round(percentile(during, 95), 2) if during else None,
        "clusters_searched_after_s": round(built_s, 1) if after else None,
        "clusters_p50_ms": round(statistics.median(after), 2) if after else None,
        "clusters_p95_ms": round(percentile(after, 95), 2) if after else None,
        "peak_rss_mb": building_rss,
    }
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
