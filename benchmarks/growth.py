"""Recall while the store grows: during a bulk import by another process, in the minute after, and steady.

    python benchmarks/growth.py --size 30000 [--base 0] [--other OTHER_CHECKOUT/src] [--served]
                                [--after 60] [--steady 20]

One data directory; ``--base`` memories are imported first, untimed. Then
readers start, each a process of its own that opens the store as a server
would and recalls the corpus's queries in a loop, one every ``--every`` ms:

- ``this``: the code of this checkout;
- ``exact``: the same code with the exact numpy scan instead of the clusters
  (the floor a vector index must beat);
- ``other``: the code of ``--other`` (a ``src`` folder, e.g. of the commit
  before), given only with that option;
- ``served``: with ``--served``, this checkout's code with the services a
  server runs beside its calls (``zm mcp``'s: the warm-up and its follower,
  which catches the index up a second at a time, off the calls' path).

The readers run side by side, at the same moments and under the same load.
Once they answer, another process imports ``--size`` memories through
``import_path`` (the path ``zm import`` takes). Each recall is put in the
phase it started in: ``during`` the import, ``after`` (the ``--after``
seconds following it), ``steady`` (the ``--steady`` seconds after that).
Prints each reader's p50 / p95 / max and count per phase, the p50 / p95 of its
CPU time a recall (all of its threads: a recall slow for want of a core spends
no more CPU than one that got it at once), and the load average.
Recall runs with ``channel=None`` (nothing written by the readers).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import memories, queries
from scale import EXACT, OWNER, load, open_app, percentile

PHASES = ("during", "after", "steady")


def write_corpus(path: Path, size: int, skip: int) -> None:
    with path.open("w") as handle:
        for n, (content, kind) in enumerate(memories(skip + size)):
            if n >= skip:
                handle.write(json.dumps({"content": content, "kind": kind}) + "\n")


def importer(home: Path, size: int, skip: int) -> None:
    """Import ``size`` memories (after the first ``skip`` of the corpus) as the benchmark's user."""
    from zero_memory.access.caller import Caller
    from zero_memory.access.users import add_user
    from zero_memory.memory.imports import import_path

    app = open_app(home)
    with app.store.tx(write=True) as tx:
        if tx.get_user(OWNER) is None:
            add_user(tx, OWNER, is_local=True)
    corpus = home / f"corpus-{skip}.jsonl"
    write_corpus(corpus, size, skip)
    started = time.perf_counter()
    report = import_path(app, Caller(OWNER, client="benchmark"), corpus, scope="personal")
    seconds = time.perf_counter() - started
    corpus.unlink()
    app.close()
    assert report.imported == size, report.to_dict()
    print(json.dumps({"imported": size, "seconds": round(seconds, 1)}), flush=True)


def reader(home: Path, config: str, every_ms: float, stop: Path) -> None:
    """Recall in a loop until ``stop`` exists; one JSON line per recall, (wall clock at its start, ms), in
    ``stop`` + the config's name (a pipe read only at the end would fill and stall the reader)."""
    from zero_memory.access.caller import Caller
    from zero_memory.memory.recall import recall

    app = open_app(home, EXACT if config == "exact" else None)
    caller = Caller(OWNER, client="benchmark")
    texts = queries(200)
    for text in texts[:20]:
        recall(app, caller, text, limit=10, channel=None)
    print(json.dumps({"ready": True}), flush=True)
    n = 0
    with served(app, config == "served"), Path(f"{stop}.{config}").open("w") as out:
        while not stop.exists():
            started_at = time.time()
            started, cpu = time.perf_counter(), time.process_time()
            recall(app, caller, texts[n % len(texts)], limit=10, channel=None)
            ms = (time.perf_counter() - started) * 1000
            cpu_ms = (time.process_time() - cpu) * 1000
            out.write(json.dumps({"t": started_at, "ms": round(ms, 3), "cpu": round(cpu_ms, 3)}) + "\n")
            n += 1
            time.sleep(max(0.0, every_ms / 1000 - ms / 1000))
    app.close()


def served(app: Any, services: bool) -> contextlib.AbstractContextManager[Any]:
    """The services ``zm mcp`` runs beside its calls, or none (imported only then: ``--other``'s code may
    have none)."""
    if not services:
        return contextlib.nullcontext()
    from zero_memory.server.services import STDIO, running

    return running(app, STDIO)


def spawn(role: str, args: list[str], src: str | None = None) -> subprocess.Popen[str]:
    """A process of this benchmark running ``role``: on this checkout's code, set up as a zm process sets
    itself up (``zero_memory.cli.entry.settle_process``: numpy's huge-page advice off), or on ``src``'s as
    it is."""
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    else:
        # Imported here: the readers of ``src`` import this file with another checkout's zero_memory.
        from zero_memory.cli.entry import settle_process

        settle_process(env)
    command = [sys.executable, __file__, "--role", role, *args]
    return subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=30_000)
    parser.add_argument("--base", type=int, default=0, help="memories imported first, untimed")
    parser.add_argument("--home", default=None)
    parser.add_argument("--other", default=None, help="the src folder of another checkout, read beside this one")
    parser.add_argument("--served", action="store_true", help="also a reader with a server's services")
    parser.add_argument("--every", type=float, default=250.0, help="ms between the starts of a reader's recalls")
    parser.add_argument("--after", type=float, default=60.0)
    parser.add_argument("--steady", type=float, default=20.0)
    parser.add_argument("--role", default="main", help=argparse.SUPPRESS)
    parser.add_argument("--config", default="this", help=argparse.SUPPRESS)
    parser.add_argument("--skip", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--stop", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "import":
        importer(Path(args.home), args.size, args.skip)
        return
    if args.role == "read":
        reader(Path(args.home), args.config, args.every, Path(args.stop))
        return

    home = Path(args.home or tempfile.mkdtemp(prefix=f"zm-growth-{args.size}-"))
    home.mkdir(parents=True, exist_ok=True)
    common = ["--home", str(home)]
    if args.base:
        base = spawn("import", [*common, "--size", str(args.base)])
        base.communicate()
    else:
        # The user exists before the readers open the store.
        spawn("import", [*common, "--size", "1"]).communicate()
    stop = home / "stop"
    stop.unlink(missing_ok=True)
    configs: dict[str, str | None] = {"this": None, "exact": None}
    if args.other:
        configs["other"] = args.other
    if args.served:
        configs["served"] = None
    readers = {
        name: spawn("read", [*common, "--config", name, "--every", str(args.every), "--stop", str(stop)], src)
        for name, src in configs.items()
    }
    for process in readers.values():
        assert process.stdout is not None
        process.stdout.readline()  # ready
    load_before = load()
    began = time.time()
    importing = spawn("import", [*common, "--size", str(args.size), "--skip", str(max(args.base, 1))])
    imported = json.loads(importing.communicate()[0].strip().splitlines()[-1])
    ended = time.time()
    load_import = load()
    time.sleep(args.after + args.steady)
    stop.touch()
    results: dict[str, list[dict[str, Any]]] = {}
    for name, process in readers.items():
        process.communicate()
        results[name] = [json.loads(line) for line in Path(f"{stop}.{name}").read_text().splitlines()]
    print(
        f"store {args.base or 1} → {args.base + args.size + 1} memories | import {imported['seconds']} s "
        f"({round(args.size / imported['seconds'])}/s) | load {load_before} → {load_import} → {load()}",
        flush=True,
    )
    bounds = {
        "during": (began, ended),
        "after": (ended, ended + args.after),
        "steady": (ended + args.after, ended + args.after + args.steady),
    }
    for name, rows in results.items():
        cells = []
        for phase in PHASES:
            low, high = bounds[phase]
            ms = [r["ms"] for r in rows if low <= r["t"] < high]
            cpu = [r["cpu"] for r in rows if low <= r["t"] < high]
            if ms:
                cells.append(
                    f"{phase} p50 {statistics.median(ms):.2f} p95 {percentile(ms, 95):.2f} "
                    f"max {max(ms):.1f} ms, CPU p50 {statistics.median(cpu):.2f} p95 {percentile(cpu, 95):.2f} "
                    f"(n {len(ms)})"
                )
            else:
                cells.append(f"{phase} -")
        print(f"{name:6} | " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
