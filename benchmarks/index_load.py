"""How long a process takes to load the vector index of a store that has a snapshot: its first search's wait,
which a server now spends in its warm-up (``server/warm.py``).

    python benchmarks/index_load.py --home DIR [--runs 3] [--cold]

DIR is a ``scale.py`` home whose index was saved (a run of ``scale.py`` leaves
one). Each run is a new process that opens the store as a server does and
times ``Store.load_index``: the snapshot read, every row's state read from the
database and checked against it, the rows changed since caught up. ``--cold``
empties the system's page cache before each run (root only: ``echo 3 >
/proc/sys/vm/drop_caches``), as after a reboot. Prints each run's seconds, the
rows loaded and the load average. Run it with ``PYTHONPATH=OTHER/src`` for
another checkout's code from ``Store.load_index`` on (one that migrates the
store further leaves it unreadable to the older code: use a copy).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale import load, open_app

from zero_memory.cli.entry import settle_process


def one(home: Path) -> dict[str, float]:
    began = time.perf_counter()
    app = open_app(home)
    opened = time.perf_counter()
    app.store.load_index()
    loaded = time.perf_counter()
    index = getattr(app.store, "index", None)  # PostgreSQL has none here
    result = {"open_s": round(opened - began, 3), "load_s": round(loaded - opened, 3)}
    result["rows"] = index.indexed if index is not None else 0
    app.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cold", action="store_true")
    parser.add_argument("--role", default="main", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "load":
        print(json.dumps(one(Path(args.home))), flush=True)
        return
    print(f"load average {load()}", flush=True)
    for n in range(args.runs):
        if args.cold:
            os.sync()
            Path("/proc/sys/vm/drop_caches").write_text("3\n")
        env = dict(os.environ)
        settle_process(env)  # as a zm process runs
        done = subprocess.run(
            [sys.executable, __file__, "--role", "load", "--home", args.home],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        print(f"run {n + 1}{' (cold)' if args.cold else ''}: {done.stdout.strip().splitlines()[-1]}", flush=True)
    print(f"load average {load()}", flush=True)


if __name__ == "__main__":
    main()
