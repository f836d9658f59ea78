"""Recall's reinforcement count after a busy quarter: ``Tx.sessions_served`` on a surfacings table a team fills.

    python benchmarks/surfacings.py [--memories 20000] [--per-day 3000] [--days 90] [--queries 200]

Every hit a recall returns is a surfacing; retention keeps them for 90 days (the reinforcement window), so a
team whose agents recall 300 times a day holds ~270,000 of them, the popular memories thousands each. Recall
asks, for each of its candidates, in how many distinct sessions it was served on the recall channel within the
window. This builds such a table in a fresh SQLite store (the schema its migrations make: a fifth of the
memories draw half the surfacings), then times that question for recall-sized sets of ids (20 popular, 60 of
the rest) with the index the migrations make and with the one before migration 0017 (``surfacings_memory``
on ``(memory_id, at)`` alone), in alternating rounds on the same file, and checks that both answer alike.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale import percentile

INDEXES = {
    "covering (0017)": "CREATE INDEX surfacings_memory ON surfacings(memory_id, at, channel, session_id)",
    "memory_id, at (before)": "CREATE INDEX surfacings_memory ON surfacings(memory_id, at)",
}
CHANNELS = ("recall", "recall", "recall", "context", "cli")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=20_000)
    parser.add_argument("--per-day", type=int, default=3_000)
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    from zero_memory.clock import to_text, utcnow
    from zero_memory.domain.records import Channel
    from zero_memory.store.sqlite.adapter import SQLiteStore

    rng = random.Random(14)
    memories = [f"mem_{n:08d}" for n in range(args.memories)]
    popular = memories[: max(1, args.memories // 5)]
    now = utcnow()
    with tempfile.TemporaryDirectory() as home:
        store = SQLiteStore.open(f"sqlite:///{home}/zm.db", dim=8)
        started = time.perf_counter()
        conn = sqlite3.connect(f"{home}/zm.db")  # the rows and the index swaps, beside the store's own
        rows = []
        for day in range(args.days):
            for n in range(args.per_day):
                memory = rng.choice(popular) if rng.random() < 0.5 else rng.choice(memories)
                at = now - timedelta(days=day, seconds=n)
                session = f"s{day}-{n // 30}"  # an agent session recalls about thirty hits (three recalls)
                rows.append((to_text(at), memory, f"user{n % 12}", session, rng.choice(CHANNELS)))
        with conn:
            conn.executemany(
                "INSERT INTO surfacings(at, memory_id, user_id, session_id, channel) VALUES (?, ?, ?, ?, ?)", rows
            )
        print(f"{len(rows):,} surfacings of {args.memories:,} memories in {time.perf_counter() - started:.1f} s")
        since = now - timedelta(days=90)
        asks = [rng.sample(popular, 20) + rng.sample(memories, 60) for _ in range(args.queries)]
        times: dict[str, list[float]] = {name: [] for name in INDEXES}
        answers: dict[str, list[dict[str, int]]] = {}
        load_before = os.getloadavg()
        for _ in range(args.rounds):
            for name, create in INDEXES.items():
                with conn:
                    conn.execute("DROP INDEX surfacings_memory")
                    conn.execute(create)
                    conn.execute("ANALYZE surfacings")
                got = []
                for ids in asks:
                    with store.tx() as tx:
                        began = time.perf_counter()
                        got.append(tx.sessions_served(ids, since=since, channel=Channel.RECALL))
                        times[name].append((time.perf_counter() - began) * 1000)
                answers[name] = got
        conn.close()
        store.close()
    first, *others = answers.values()
    assert all(other == first for other in others), "the two indexes answered differently"
    load = "/".join(f"{x:.1f}" for x in load_before) + " → " + "/".join(f"{x:.1f}" for x in os.getloadavg())
    for name, ms in times.items():
        print(f"sessions_served, {name}: p50 {statistics.median(ms):.2f} ms | p95 {percentile(ms, 95):.2f} ms")
    print(f"load {load}")


if __name__ == "__main__":
    main()
