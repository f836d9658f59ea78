"""The first recalls of a server that sat idle while another process imported: with and without the follower.

    python benchmarks/after_import.py [--size 30000] [--base 1] [--rounds 2] [--recalls 5]

A server keeps its vector index caught up with other processes' writes
(``server/warm.py``'s follower, a step a second); without it, a server idle
during a ``zm import`` of a team's history left every imported row to its next
search. Each round: a data directory with ``--base`` memories; two reader
processes open it as servers do, each with the background services of
``zm mcp`` (``follow``) or with none of them (``idle``, how a server kept its
index before), and each recalls once (everything loaded); then another
process imports ``--size`` memories (``import_path``, the path of ``zm
import``) while they wait, idle; then each makes ``--recalls`` recalls one
after the other (the readers take turns, the follower's reader first in even
rounds). Prints each reader's recalls (ms), its first beside the median of
the others, and the load average.
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import queries
from scale import OWNER, load, open_app

from zero_memory.cli.entry import settle_process

GROWTH = Path(__file__).resolve().parent / "growth.py"


def reader(home: Path, config: str, count: int) -> None:
    """As a server: the chosen services running; one recall, then ``count`` timed ones each time asked."""
    from zero_memory.access.caller import Caller
    from zero_memory.memory.recall import recall
    from zero_memory.server.services import STDIO, Services, running

    app = open_app(home)
    caller = Caller(OWNER, client="benchmark")
    texts = queries(count + 1)
    with running(app, STDIO if config == "follow" else Services()):
        recall(app, caller, texts[0], channel=None)
        print(json.dumps({"ready": config}), flush=True)
        for line in sys.stdin:
            if line.strip() == "quit":
                break
            ms = []
            for text in texts[1:]:
                began = time.perf_counter()
                recall(app, caller, text, channel=None)
                ms.append(round((time.perf_counter() - began) * 1000, 2))
            print(json.dumps(ms), flush=True)
    app.close()


def spawn(args: list[str]) -> subprocess.Popen[str]:
    env = dict(os.environ)
    settle_process(env)  # as zm would run
    return subprocess.Popen([sys.executable, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)


def one_round(size: int, base: int, recalls: int, follow_first: bool) -> dict[str, list[float]]:
    home = Path(tempfile.mkdtemp(prefix="zm-after-import-"))
    spawn([str(GROWTH), "--role", "import", "--home", str(home), "--size", str(base)]).communicate()
    order = ["follow", "idle"] if follow_first else ["idle", "follow"]
    readers = {
        name: spawn([__file__, "--role", "read", "--home", str(home), "--config", name, "--recalls", str(recalls)])
        for name in order
    }
    for process in readers.values():
        assert process.stdout is not None
        process.stdout.readline()  # ready
    importing = spawn([str(GROWTH), "--role", "import", "--home", str(home), "--size", str(size), "--skip", str(base)])
    imported = json.loads(importing.communicate()[0].strip().splitlines()[-1])
    time.sleep(2.0)  # the follower's step a second: the rows of the import's last second caught up
    results: dict[str, list[float]] = {}
    for name, process in readers.items():
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write("go\n")
        process.stdin.flush()
        results[name] = json.loads(process.stdout.readline())
    for process in readers.values():
        assert process.stdin is not None
        process.stdin.write("quit\n")
        process.stdin.close()
        process.wait()
    print(f"  import of {size}: {imported['seconds']} s", flush=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=30_000)
    parser.add_argument("--base", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--recalls", type=int, default=5)
    parser.add_argument("--role", default="main", help=argparse.SUPPRESS)
    parser.add_argument("--home", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--config", default="follow", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "read":
        reader(Path(args.home), args.config, args.recalls)
        return
    print(f"load average {load()}", flush=True)
    for n in range(args.rounds):
        for name, ms in one_round(args.size, args.base, args.recalls, n % 2 == 0).items():
            print(f"  {name:6} first {ms[0]:8.2f} ms, then p50 {statistics.median(ms[1:]):6.2f} ms | {ms}", flush=True)
    print(f"load average {load()}", flush=True)


if __name__ == "__main__":
    main()
