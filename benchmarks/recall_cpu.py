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

``--after-writes`` also times each recall right after a memory is remembered in
the same process (untimed), as a server answers between an agent's writes: every
write moves the store's change counter, and what recall keeps between calls must
follow it. It writes to the database: use a copy.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import queries
from scale import OWNER, open_app, percentile

Times = tuple[list[float], list[float]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", required=True)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--answers", default=None, help="write every hit of every query to this file")
    parser.add_argument("--after-writes", action="store_true", help="also time recalls each right after a write")
    args = parser.parse_args()

    from zero_memory.access.caller import Caller
    from zero_memory.memory.recall import recall

    started_load = os.getloadavg()
    app = open_app(Path(args.home))
    caller = Caller(OWNER, client="benchmark")
    texts = queries(args.queries)
    answers = [[h.model_dump(mode="json") for h in recall(app, caller, t, channel=None).hits] for t in texts]
    wall_ms, cpu_ms = timed(lambda text: recall(app, caller, text, limit=10, channel=None), texts)
    written = None
    if args.after_writes:
        written = timed(lambda text: recall(app, caller, text, limit=10, channel=None), texts, before=write(app))
    app.close()
    if args.answers:
        Path(args.answers).write_text(json.dumps(answers, indent=1, sort_keys=True))
    load = "/".join(f"{x:.1f}" for x in started_load) + " → " + "/".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"recall {summary(wall_ms, cpu_ms)} | load {load}", flush=True)
    if written is not None:
        print(f"recall after a write {summary(*written)}", flush=True)


def timed(call: Callable[[str], object], texts: list[str], before: Callable[[int], object] | None = None) -> Times:
    """Wall and CPU milliseconds of ``call`` for each text (``before(n)`` run untimed ahead of the n-th)."""
    wall_ms, cpu_ms = [], []
    for n, text in enumerate(texts):
        if before is not None:
            before(n)
        wall, cpu = time.perf_counter(), time.process_time()
        call(text)
        cpu_ms.append((time.process_time() - cpu) * 1000)
        wall_ms.append((time.perf_counter() - wall) * 1000)
    return wall_ms, cpu_ms


def write(app: Any) -> Callable[[int], object]:
    """Remember one new memory of the benchmark's user: a note an agent might leave between two recalls."""
    from zero_memory.access.caller import Caller
    from zero_memory.domain.memory import Kind
    from zero_memory.memory.models import RememberRequest
    from zero_memory.memory.write import remember

    caller = Caller(OWNER, client="benchmark")

    def one(n: int) -> object:
        content = f"Note {n}: the build cache of job {n} lives in /var/cache/ci/{n} and is cleared weekly"
        return remember(app, caller, RememberRequest(content=content, kind=Kind.FACT, scope="personal"))

    return one


def summary(wall_ms: list[float], cpu_ms: list[float]) -> str:
    return (
        f"p50 {statistics.median(wall_ms):.2f} ms | p95 {percentile(wall_ms, 95):.2f} ms | "
        f"CPU p50 {statistics.median(cpu_ms):.2f} ms | CPU mean {statistics.mean(cpu_ms):.2f} ms"
    )


if __name__ == "__main__":
    main()
