"""Hygiene sweep benchmark: candidate generation, filtering and a full scan with a zero-latency fake judge.

    python benchmarks/sweep.py [--size 100000] [--subjects 10000] [--home DIR] [--json]

Builds (or reuses, with --home) a corpus of --size memories, then over
--subjects of them measures: candidate generation (nearest neighbours above
the sweep floor, at most 3 each), the pre-judge filters, and the whole pair
scan (judge, route, act) with a fake judge that answers "unrelated" at once.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import memories

from zero_memory.access.caller import Caller
from zero_memory.access.project_identity import project_paths
from zero_memory.access.users import add_user
from zero_memory.bootstrap import build_app
from zero_memory.hygiene import filters
from zero_memory.hygiene.candidates import pairs
from zero_memory.hygiene.runs import Tally
from zero_memory.hygiene.scan import ScanOptions, scan_pairs
from zero_memory.judge.fake import FakeJudge
from zero_memory.memory.imports import import_path
from zero_memory.settings import Settings

OWNER = "bench"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--subjects", type=int, default=10_000)
    parser.add_argument("--home", default=None, help="reuse (or create) a data directory")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    home = Path(args.home or tempfile.mkdtemp(prefix="zm-sweep-"))
    judge = FakeJudge(default="unrelated")
    app = build_app(Settings.from_environ({"ZM_HOME": str(home)}), judge_factory=lambda owner, run_id: judge)
    with app.store.tx(write=True) as tx:
        if tx.get_user(OWNER) is None:
            add_user(tx, OWNER, is_local=True)
        existing = tx.count_memories(owner=OWNER)
    if existing < args.size:
        corpus = home / "corpus.jsonl"
        with corpus.open("w") as handle:
            for content, kind in memories(args.size):
                handle.write(json.dumps({"content": content, "kind": kind}) + "\n")
        import_path(app, Caller(OWNER, client="benchmark"), corpus, scope="personal")

    config = app.settings.hygiene
    with app.store.tx() as tx:
        subjects = tx.live_memories(owner=OWNER, limit=args.subjects, newest_first=True)
        tx.similar(app.embedder.embed(["warm the index"])[0], floor=0.0, limit=1, owner=OWNER)
    started = time.perf_counter()
    with app.store.tx() as tx:
        candidates = list(pairs(tx, subjects, floor=config.sweep_similarity, limit=config.sweep_max_candidates))
    generation = time.perf_counter() - started

    started = time.perf_counter()
    with app.store.tx() as tx:
        paths = project_paths(tx, OWNER)
        kept = [c for c in candidates if filters.screen(tx, c, judge.model, paths) is None]
    filtering = time.perf_counter() - started

    started = time.perf_counter()
    tally = Tally()
    scan_pairs(app, OWNER, candidates, tally, ScanOptions(), None)
    scanning = time.perf_counter() - started
    app.close()

    row = {
        "backend": app.store.backend,
        "corpus": max(existing, args.size),
        "subjects": len(subjects),
        "pairs": len(candidates),
        "generation_s": round(generation, 2),
        "subjects_per_s": round(len(subjects) / generation, 1),
        "filtering_s": round(filtering, 2),
        "pairs_filtered_per_s": round(len(candidates) / filtering, 1) if filtering else None,
        "pairs_to_judge": len(kept),
        "full_scan_s": round(scanning, 2),
        "pairs_scanned_per_s": round(len(candidates) / scanning, 1) if scanning else None,
    }
    if args.json:
        print(json.dumps(row, indent=2))
    else:
        print(f"{row['backend']}: {row['subjects']} subjects over {row['corpus']} memories → {row['pairs']} pairs")
        print(f"  candidate generation {row['generation_s']} s ({row['subjects_per_s']} subjects/s)")
        print(
            f"  pre-judge filters    {row['filtering_s']} s ({row['pairs_filtered_per_s']} pairs/s), "
            f"{row['pairs_to_judge']} left for the judge"
        )
        print(f"  full scan, fake judge {row['full_scan_s']} s ({row['pairs_scanned_per_s']} pairs/s)")


if __name__ == "__main__":
    main()
