"""Crash benchmark: SIGKILL ``zm serve`` again and again on the same data, and check every restart.

    python benchmarks/crash.py [--cycles 10] [--store sqlite|postgres] [--database-url URL]
                               [--scenario both|burst|hygiene] [--seed 0] [--json]

The long form of tests/reliability/test_crash.py, on one data directory that
accumulates every cycle's work. Each cycle:

- burst: four clients write over HTTP; the server is killed after a random
  number of acknowledged writes (8 to 64), restarted, and checked: every
  acknowledged write whole, live and readable, nothing unsent or doubled, the
  database consistent (tests/reliability/consistency.py).
- hygiene: a fresh user's six topic pairs are scanned by a slow fake judge;
  the server is killed while the judge holds its k-th answer (k = 1 to 6 in
  turn, cycle after cycle), restarted, and checked: the run is interrupted, the database
  consistent, exactly the k-1 answered pairs committed; a new run judges only
  the rest and ends where one uninterrupted run would; a third judges nothing.

Prints one line per cycle and whether every cycle was consistent; exits 1 if not.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.openai_server import FakeOpenAIServer  # noqa: E402
from tests.reliability.crash import SlowJudge, hygiene_cycle, judge_env, write_burst_cycle  # noqa: E402
from tests.reliability.service import Service, deploy, running  # noqa: E402

JUDGE_DELAY_S = 0.2


def database_url(store: str, explicit: str | None) -> str | None:
    if explicit or store == "sqlite":
        return explicit
    from tests.pg import fresh_pg_url

    return fresh_pg_url()


def cycle(service: Service, judge: SlowJudge, scenario: str, n: int, rng: random.Random) -> dict[str, Any]:
    row: dict[str, Any] = {"cycle": n}
    started = time.monotonic()
    try:
        if scenario in ("both", "burst"):
            kill_after = rng.randint(8, 64)
            log = write_burst_cycle(service, kill_after=kill_after, seed=n)
            row["burst"] = {
                "kill_after": kill_after,
                "acknowledged": len(log.acked),
                "in_flight_at_kill": log.in_flight_at_kill,
                "landed_unacknowledged": log.landed_unacknowledged,
            }
        if scenario in ("both", "hygiene"):
            kill_at = 1 + n % 6  # every point of the six-pair run in turn
            crash = hygiene_cycle(service, judge, kill_at=kill_at, user=f"u{n}")
            row["hygiene"] = {
                "kill_at": kill_at,
                "judged_before": kill_at - 1,
                "judged_after": len(crash.asked_after),
                "auto_resolved_after": crash.summary["auto_resolved"],
                "queued_after": crash.summary["queued"],
            }
        row["consistent"] = True
    except AssertionError as failure:
        row["consistent"] = False
        row["failure"] = "".join(traceback.format_exception_only(failure)).strip()[:2000]
        if service.process is None:
            service.start()
    row["seconds"] = round(time.monotonic() - started, 1)
    return row


def show(row: dict[str, Any]) -> None:
    parts = [f"cycle {row['cycle']:>3}: {'consistent' if row['consistent'] else 'INCONSISTENT'} ({row['seconds']} s)"]
    if "burst" in row:
        burst = row["burst"]
        parts.append(
            f"burst killed after {burst['acknowledged']} acknowledged writes with "
            f"{burst['in_flight_at_kill']} in flight ({burst['landed_unacknowledged']} of them landed)"
        )
    if "hygiene" in row:
        hygiene = row["hygiene"]
        parts.append(f"hygiene killed at judgement {hygiene['kill_at']}, next run judged {hygiene['judged_after']}")
    print("; ".join(parts), flush=True)
    if not row["consistent"]:
        print(f"    {row['failure']}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cycles", type=int, default=10)
    parser.add_argument("--store", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--database-url", default=None, help="an empty PostgreSQL database to use as is")
    parser.add_argument("--scenario", choices=("both", "burst", "hygiene"), default="both")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    url = database_url(args.store, args.database_url)
    users = ["alice", *(f"u{n}" for n in range(args.cycles))] if args.scenario != "burst" else ["alice"]
    judge = SlowJudge(delay_s=JUDGE_DELAY_S)
    rows = []
    with FakeOpenAIServer() as fake:
        fake.respond_with(judge)
        service = deploy(Path(tempfile.mkdtemp(prefix="zm-crash-")), url, users=users, env=judge_env(fake))
        with running(service):
            for n in range(args.cycles):
                rows.append(cycle(service, judge, args.scenario, n, rng))
                if not args.json:
                    show(rows[-1])
    consistent = sum(1 for row in rows if row["consistent"])
    summary = {
        "store": "postgres" if url else "sqlite",
        "scenario": args.scenario,
        "cycles": len(rows),
        "consistent_cycles": consistent,
        "kills": len(rows) * (2 if args.scenario == "both" else 1),
        "rows": rows,
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"{summary['store']}: {consistent}/{len(rows)} cycles consistent ({summary['kills']} kills)")
    sys.exit(0 if consistent == len(rows) else 1)


if __name__ == "__main__":
    main()
