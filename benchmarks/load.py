"""Load benchmark: N MCP clients over streamable HTTP against one ``zm serve``, for a fixed time.

    python benchmarks/load.py [--clients 8] [--seconds 60] [--store sqlite|postgres] [--database-url URL]
                              [--server-env NAME=VALUE ...] [--workers N] [--json]

The server is a real ``zm serve`` subprocess on a loopback port, over a fresh
data directory (SQLite, or with ``--store postgres`` a fresh database on
``ZM_TEST_DATABASE_URL`` or on a throwaway local PostgreSQL; ``--database-url``
names one to use as is). The clients run in this process as asyncio tasks,
each with its own connection, half of them as alice and half as bob: remember
(fresh texts, and texts of a small pool each user's clients write again and
again), recall, and now and then a background scan_hygiene. ``--server-env``
sets a variable for the server only (e.g. ``OPENBLAS_NUM_THREADS=1``);
``--workers N`` runs ``zm serve --workers N``.

The load starts once the server's processes are idle (the warm-up done, each
worker's query process loaded). Then it checks the books (tests/reliability/load.py): errors, acknowledged
writes lost or duplicated, the database's consistency; and prints p50, p95
and max latency per tool and the throughput, and the CPU time of a call: the
server's (``zm serve`` and its workers, from /proc) and this process's (the
clients', which on a small machine share the cores with the server). Exits 1
if any check failed.
The short form runs in the test suite: tests/reliability/test_load.py.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from procstat import tree_cpu_s  # noqa: E402
from tests.reliability import load  # noqa: E402
from tests.reliability.service import deploy, running  # noqa: E402

USERS = ["alice", "bob"]


def database_url(store: str, explicit: str | None) -> str | None:
    if explicit or store == "sqlite":
        return explicit
    from tests.pg import fresh_pg_url

    return fresh_pg_url()


def settled(pid: int, timeout_s: float = 60) -> None:
    """Wait until the server's processes are idle: its warm-up done, each worker's query process loaded (their
    start is not the load's)."""
    deadline = time.monotonic() + timeout_s
    before = tree_cpu_s(pid)
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = tree_cpu_s(pid)
        if now - before < 0.02:
            return
        before = now


def measure(
    clients: int, seconds: float, url: str | None, seed: int, env: dict[str, str], workers: int = 1
) -> dict[str, Any]:
    home = Path(tempfile.mkdtemp(prefix="zm-load-"))
    service = deploy(home, url, users=USERS, env=env)
    service.args = ("--workers", str(workers)) if workers > 1 else ()
    before = os.getloadavg()
    with running(service):
        assert service.process is not None
        pid = service.process.pid
        settled(pid)
        server_cpu, client_cpu = tree_cpu_s(pid), time.process_time()
        log = load.run(service, clients=clients, seconds=seconds, users=USERS, seed=seed)
        server_cpu, client_cpu = tree_cpu_s(pid) - server_cpu, time.process_time() - client_cpu
        after = os.getloadavg()
        books = load.audit(service, log)
    calls = sum(len(values) for values in log.latencies_ms.values()) or 1
    cpu = {
        "server_ms_per_call": round(server_cpu / calls * 1000, 2),
        "clients_ms_per_call": round(client_cpu / calls * 1000, 2),
        "server_cores": round(server_cpu / log.elapsed_s, 2),
        "clients_cores": round(client_cpu / log.elapsed_s, 2),
    }
    return {"workers": workers, "cpu": cpu} | load.report(
        log,
        books,
        store="postgres" if url else "sqlite",
        clients=clients,
        seconds=seconds,
        server_env=env,
        machine={
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "loadavg_1m_before": round(before[0], 2),
            "loadavg_1m_after": round(after[0], 2),
        },
    )


def show(row: dict[str, Any]) -> None:
    machine = row["machine"]
    extra = "".join(f" {name}={value}" for name, value in row["server_env"].items())
    extra += f" --workers {row['workers']}" if row.get("workers", 1) > 1 else ""
    print(
        f"{row['store']}{extra}: {row['clients']} clients for {row['elapsed_s']} s — {row['calls']} calls, "
        f"{row['calls_per_s']}/s, {row['errors']} errors "
        f"({machine['cpus']} CPUs, load average {machine['loadavg_1m_before']} → {machine['loadavg_1m_after']})"
    )
    print(f"  {'tool':<13} {'calls':>6} {'per s':>6} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    for tool, figures in row["tools"].items():
        print(
            f"  {tool:<13} {figures['calls']:>6} {figures['per_s']:>6} {figures['p50_ms']:>8} "
            f"{figures['p95_ms']:>8} {figures['max_ms']:>8}"
        )
    cpu = row["cpu"]
    print(
        f"  CPU a call: server {cpu['server_ms_per_call']} ms ({cpu['server_cores']} cores), "
        f"clients {cpu['clients_ms_per_call']} ms ({cpu['clients_cores']} cores)"
    )
    writes = row["writes"]
    print(
        f"  writes: {writes['acknowledged']} acknowledged ({writes['created']} created, {writes['absorbed']} "
        f"absorbed as repeats of {writes['distinct_pooled_texts']} shared texts); lost {writes['lost']}, "
        f"duplicated {writes['duplicated']}; database consistent: {'yes' if row['consistent'] else 'NO'}; "
        f"hygiene runs started: {row['hygiene_runs_started']}"
    )
    for problem in row["error_samples"] + row["problems"]:
        print(f"  ! {problem}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--store", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--database-url", default=None, help="an empty PostgreSQL database to use as is")
    parser.add_argument(
        "--server-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an environment variable for the server (repeatable)",
    )
    parser.add_argument("--workers", type=int, default=1, help="zm serve --workers N")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    env = dict(item.split("=", 1) for item in args.server_env)
    row = measure(args.clients, args.seconds, database_url(args.store, args.database_url), args.seed, env, args.workers)
    if args.json:
        print(json.dumps(row, indent=2))
    else:
        show(row)
    clean = row["errors"] == 0 and row["consistent"] and not row["writes"]["lost"] and not row["writes"]["duplicated"]
    sys.exit(0 if clean else 1)


if __name__ == "__main__":
    main()
