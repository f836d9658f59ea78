"""The fixed cost of a recall, stage by stage, beside a bare exact scan and another checkout.

    python benchmarks/fixed_cost.py [--sizes 1000,10000,50000] [--queries 200] [--home DIR]
                                    [--other OTHER_CHECKOUT/src] [--inline] [--rounds 4] [--blas-threads 1]

For each size a data directory (``--home``/SIZE, kept for the next run) is
filled through ``import_path``. Then readers start, each a process of its own
on that directory:

- ``this``: recall as this checkout does it in a server: the query process started (as the server's
  warm-up starts it) and ready before anything is timed;
- ``inline``: the same without the query process (every query embedded in the reader's own process),
  given only with ``--inline``;
- ``other``: recall as the checkout of ``--other`` (a ``src`` folder, e.g. of
  the commit before) does it, given only with that option;
- ``exact``: the bare exact scan on the same model: the query embedded as
  recall embeds it, one numpy product with every vector of the read set
  (read once into a matrix) and the top ten; no full text, no filters, no
  reads: the floor the target "recall p50 ≤ 1.2× an exact scan" is set against.

Each reader makes one untimed pass over the queries (its p50 is printed as
``first pass``: nothing of the queries seen before, the store just opened),
then the readers take turns, ``--rounds`` rounds of a slice of the queries
each, so that they meet the same load. Prints each one's recall p50 / p95,
its p50 as a multiple of the exact scan's, the median CPU time of a call (all
of the process's threads: steadier than wall time on a shared machine), the
p50 of the same calls with the query's vector made beforehand, timed in
rounds of their own (``without the embedding``: the fixed cost itself), and
its peak RSS (what it keeps in memory); then, for ``this`` (and ``other``),
the median of each stage over one more pass (``benchmarks/stages.py``:
``rest`` is what no stage holds: the transaction, fusion, building the
answer) and the load average. Every reader runs with ``--blas-threads`` BLAS
threads, as ``zm serve`` does (one). Recall runs with ``channel=None``:
nothing is written.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import queries
from scale import OWNER, import_phase, load, open_app, peak_rss_mb, percentile

TOP = 10


class _Out:
    def put(self, row: dict[str, Any]) -> None:
        print(f"  import: {row['import_per_s']}/s, load {row['load']}", flush=True)


def _start_query_process(app: Any) -> None:
    """Start the app's query process as a server's warm-up does, and wait until it is ready (a checkout
    without one embeds every query in its own process)."""
    try:
        from zero_memory.server.warm import start_query_process
    except ImportError:
        return
    start_query_process(app)
    deadline = time.monotonic() + 60
    while app.query_process is not None and not app.query_process.ready and time.monotonic() < deadline:
        time.sleep(0.01)


def _recaller(home: Path, process: bool = True) -> tuple[Callable[[str], Any], Any, Callable[[], dict[str, float]]]:
    """(recall one query, the app, a pass under ``Stages``) for recall as the code on the path does it."""
    from stages import Stages

    from zero_memory.access.caller import Caller
    from zero_memory.memory import recall as recall_module
    from zero_memory.memory.recall import recall

    app = open_app(home)
    if process:
        _start_query_process(app)
    caller = Caller(OWNER, client="benchmark")
    embed = recall_module.embed_queries
    # In the rounds without the embedding, the query's vector comes from ``_VECTORS`` (made beforehand).
    recall_module.embed_queries = lambda embedder, texts: _VECTORS[texts[0]] if _VECTORS else embed(embedder, texts)

    def one(text: str) -> Any:
        return recall(app, caller, text, limit=TOP, channel=None)

    def staged() -> dict[str, float]:
        with Stages(app) as stages:
            for text in _TEXTS:
                with stages.call():
                    one(text)
        return stages.summary()

    return one, app, staged


def _exact_scan(home: Path) -> tuple[Callable[[str], Any], Any, Callable[[], dict[str, float]]]:
    """(search one query, the app) for the bare exact scan over the benchmark user's vectors."""
    import numpy as np

    from zero_memory.domain import scopes
    from zero_memory.embedding.base import embed_queries

    app = open_app(home)
    readable = [scopes.personal(OWNER), scopes.core(OWNER)]
    with app.store.tx() as tx:
        rows = tx._query(
            "SELECT id, embedding FROM memories WHERE status = 'live' AND embedding_dim = ? "
            f"AND scope IN ({', '.join('?' * len(readable))})",
            [app.store.dim, *readable],
        )
    ids = [row["id"] for row in rows]
    matrix = np.frombuffer(b"".join(row["embedding"] for row in rows), dtype=np.float32).reshape(len(rows), -1)

    def one(text: str) -> list[str]:
        vector = (_VECTORS[text] if _VECTORS else embed_queries(app.embedder, [text]))[0]
        sims = matrix @ vector
        top = np.argpartition(-sims, TOP)[:TOP]
        return [ids[i] for i in top[np.argsort(-sims[top])]]

    return one, app, dict


_TEXTS: list[str] = []
_VECTORS: dict[str, Any] = {}  # the queries' vectors, while rounds without the embedding run


def reader(home: Path, config: str, count: int) -> None:
    """Answer the parent's commands on stdin, one JSON line each on stdout: ``first`` (the untimed pass's
    times), ``round START END`` (times of those queries), ``stages``, ``quit``."""
    from zero_memory.embedding.base import embed_queries

    _TEXTS.extend(queries(count))
    if config == "exact":
        one, app, staged = _exact_scan(home)
    else:
        one, app, staged = _recaller(home, process=config != "inline")
    process = getattr(app, "query_process", None)
    vectors = {text: embed_queries(app.embedder, [text]) for text in _TEXTS}
    print(json.dumps({"ready": config}), flush=True)
    for line in sys.stdin:
        command, *rest = line.split()
        if command == "quit":
            break
        if process is not None:
            # Without the embedding the query process has nothing to do: recall embeds (looks up) here.
            app.query_process = None if command == "bare" else process
        _VECTORS.clear()
        if command == "stages":
            print(json.dumps(staged()), flush=True)
            continue
        if command == "rss":
            print(json.dumps(peak_rss_mb()), flush=True)
            continue
        texts = _TEXTS if command == "first" else _TEXTS[int(rest[0]) : int(rest[1])]
        if command == "bare":
            _VECTORS.update(vectors)
        ms = []
        for text in texts:
            began, cpu = time.perf_counter(), time.process_time()
            one(text)
            ms.append(((time.perf_counter() - began) * 1000, (time.process_time() - cpu) * 1000))
        print(json.dumps(ms), flush=True)
    app.close()


class _Reader:
    def __init__(self, home: Path, config: str, count: int, src: str | None, blas_threads: int) -> None:
        env = dict(os.environ)
        for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env[name] = str(blas_threads)
        if src:
            env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
        command = [sys.executable, __file__, "--role", "read", "--config", config, "--home", str(home)]
        self.process = subprocess.Popen(
            [*command, "--queries", str(count)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )
        self.ask("")  # ready

    def ask(self, command: str) -> Any:
        assert self.process.stdin is not None and self.process.stdout is not None
        if command:
            self.process.stdin.write(command + "\n")
            self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("quit\n")
        self.process.stdin.close()
        self.process.wait()


def measure(home: Path, count: int, rounds: int, other: str | None, blas_threads: int, inline: bool) -> None:
    started_load = load()
    configs: dict[str, str | None] = {"this": None, "exact": None}
    if inline:
        configs["inline"] = None
    if other:
        configs["other"] = other
    readers = {name: _Reader(home, name, count, src, blas_threads) for name, src in configs.items()}
    first = {name: r.ask("first") for name, r in readers.items()}
    ms: dict[str, list[list[float]]] = {name: [] for name in readers}
    bare: dict[str, list[list[float]]] = {name: [] for name in readers}
    step = max(1, count // rounds)
    for start in range(0, count, step):
        for name, r in readers.items():
            ms[name] += r.ask(f"round {start} {start + step}")
            bare[name] += r.ask(f"bare {start} {start + step}")
    stages = {name: r.ask("stages") for name, r in readers.items() if name != "exact"}
    rss = {name: r.ask("rss") for name, r in readers.items()}
    for r in readers.values():
        r.close()
    exact = statistics.median(wall for wall, _ in ms["exact"])
    fixed = {name: statistics.median(wall for wall, _ in rows) for name, rows in bare.items()}
    for name, rows in ms.items():
        values = [wall for wall, _ in rows]
        p50 = statistics.median(values)
        print(
            f"  {name:5} p50 {p50:6.2f} p95 {percentile(values, 95):6.2f} ms ({p50 / exact:.2f}× exact) "
            f"| CPU p50 {statistics.median(cpu for _, cpu in rows):.2f} ms "
            f"| without the embedding p50 {fixed[name]:.2f} ms "
            f"| first pass p50 {statistics.median(wall for wall, _ in first[name]):.2f} ms | peak RSS {rss[name]} MB",
            flush=True,
        )
    for name, summary in stages.items():
        print(f"  {name} stages (p50 ms): " + ", ".join(f"{k} {v}" for k, v in summary.items()), flush=True)
    print(f"  load {started_load} → {load()}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--home", default=None)
    parser.add_argument("--other", default=None, help="the src folder of another checkout, measured beside this one")
    parser.add_argument("--blas-threads", type=int, default=1)
    parser.add_argument("--inline", action="store_true", help="also this checkout without the query process")
    parser.add_argument("--role", default="main", help=argparse.SUPPRESS)
    parser.add_argument("--config", default="this", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "read":
        reader(Path(args.home), args.config, args.queries)
        return
    root = Path(args.home or tempfile.mkdtemp(prefix="zm-fixed-cost-"))
    for size in (int(s) for s in args.sizes.split(",")):
        home = root / str(size)
        home.mkdir(parents=True, exist_ok=True)
        print(f"{size} memories ({home})", flush=True)
        if not (home / "zm.db").exists():
            import_phase(home, size, True, _Out())
        measure(home, args.queries, args.rounds, args.other, args.blas_threads, args.inline)


if __name__ == "__main__":
    main()
