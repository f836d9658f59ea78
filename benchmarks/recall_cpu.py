"""The CPU of one recall at scale, and its answers, for comparing two versions of the code on one database.

    python benchmarks/recall_cpu.py --home DIR [--queries 300] [--answers FILE]
    PYTHONPATH=OTHER_CHECKOUT/src python benchmarks/recall_cpu.py --home DIR --answers OTHER_FILE

Opens the store of ``--home`` (a data directory of ``scale.py --home``), asks the
corpus's queries once untimed (the rows come from the page cache after that), then
times each recall: wall time and the process's CPU time (``time.process_time``, so
that what other processes do on the machine counts less). Recall runs with
``channel=None``: no surfacings are written and every run reads the same database.
``--answers FILE`` writes every hit of every query (id, score, age, flags) as JSON,
so that two versions' answers can be compared with ``cmp``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import queries
from scale import OWNER, open_app, percentile


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", required=True)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--answers", default=None, help="write every hit of every query to this file")
    args = parser.parse_args()

    from zero_memory.access.caller import Caller
    from zero_memory.memory.recall import recall

    started_load = os.getloadavg()
    app = open_app(Path(args.home))
    caller = Caller(OWNER, client="benchmark")
    texts = queries(args.queries)
    answers = [[h.model_dump(mode="json") for h in recall(app, caller, t, channel=None).hits] for t in texts]
    wall_ms, cpu_ms = [], []
    for text in texts:
        wall, cpu = time.perf_counter(), time.process_time()
        recall(app, caller, text, limit=10, channel=None)
        cpu_ms.append((time.process_time() - cpu) * 1000)
        wall_ms.append((time.perf_counter() - wall) * 1000)
    app.close()
    if args.answers:
        Path(args.answers).write_text(json.dumps(answers, indent=1, sort_keys=True))
    load = "/".join(f"{x:.1f}" for x in started_load) + " → " + "/".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"recall p50 {statistics.median(wall_ms):.2f} ms | p95 {percentile(wall_ms, 95):.2f} ms | "
        f"CPU p50 {statistics.median(cpu_ms):.2f} ms | CPU mean {statistics.mean(cpu_ms):.2f} ms | load {load}",
        flush=True,
    )


if __name__ == "__main__":
    main()
