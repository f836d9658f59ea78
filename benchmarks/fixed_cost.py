"""The fixed cost of a recall, stage by stage, at small and medium sizes, beside an exact scan.

    python benchmarks/fixed_cost.py [--sizes 1000,10000,50000] [--queries 200] [--home DIR]

For each size a data directory (``--home``/SIZE, kept for the next run) is
filled through ``import_path``; then, in one process, the corpus's queries are
recalled in alternating rounds by the store as it is and by the same store
with the exact numpy scan (``scale.EXACT``), after one untimed pass. Prints
each one's recall p50 / p95 and, for the store as it is, the median of each
stage (``benchmarks/stages.py``) and the load average.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import queries
from scale import EXACT, OWNER, import_phase, load, open_app, percentile
from stages import Stages

ROUNDS = 4


class _Out:
    def put(self, row: dict[str, Any]) -> None:
        print(f"import: {row['import_per_s']}/s, load {row['load']}", flush=True)


def measure(home: Path, count: int) -> None:
    from zero_memory.access.caller import Caller
    from zero_memory.memory.recall import recall

    started_load = load()
    apps = {"index": open_app(home), "exact": open_app(home, EXACT)}
    caller = Caller(OWNER, client="benchmark")
    texts = queries(count)
    for app in apps.values():
        for text in texts:
            recall(app, caller, text, limit=10, channel=None)
    ms: dict[str, list[float]] = {name: [] for name in apps}
    step = max(1, count // ROUNDS)
    for start in range(0, count, step):
        for name, app in apps.items():
            for text in texts[start : start + step]:
                began = time.perf_counter()
                recall(app, caller, text, limit=10, channel=None)
                ms[name].append((time.perf_counter() - began) * 1000)
    with Stages(apps["index"]) as stages:
        for text in texts:
            with stages.call():
                recall(apps["index"], caller, text, limit=10, channel=None)
    for app in apps.values():
        app.close()
    cells = [f"{name} p50 {statistics.median(v):.2f} p95 {percentile(v, 95):.2f} ms" for name, v in ms.items()]
    print(" | ".join(cells) + f" | load {started_load} → {load()}", flush=True)
    print("  stages (p50 ms): " + ", ".join(f"{k} {v}" for k, v in stages.summary().items()), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--home", default=None)
    args = parser.parse_args()
    root = Path(args.home or tempfile.mkdtemp(prefix="zm-fixed-cost-"))
    for size in (int(s) for s in args.sizes.split(",")):
        home = root / str(size)
        home.mkdir(parents=True, exist_ok=True)
        print(f"{size} memories ({home})", flush=True)
        if not (home / "zm.db").exists():
            import_phase(home, size, True, _Out())
        measure(home, args.queries)


if __name__ == "__main__":
    main()
