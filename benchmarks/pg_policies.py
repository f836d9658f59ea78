"""What PostgreSQL's row policies cost recall's postings statement, side by side on several databases.

    python benchmarks/pg_policies.py --database-url URL --databases zm_bench_policy,zm_bench_import
                                     [--role zm_bench] [--user bench] [--queries 120] [--rounds 6]
                                     [--superuser] [--explain] [--recalls N --home DIR]

Each database is a copy of the same store (``postgres.py`` leaves one; copy it
with ``CREATE DATABASE ... TEMPLATE``) whose policies differ: one migrated by
this code, one by another checkout, one with a policy altered by hand. The
first must be at this code's schema: the queries' matched words and readable
scopes are read through this code's store there (``text_plan`` and
``visibility``, as recall reads them); the others are only queried, never
migrated.

Then, in rounds that alternate the databases' order (A B, B A, ...), each
database answers recall's postings statement (``PostgresTx.POSTINGS``) for
every query, as --role (the policies bind it) acting for --user, one
transaction each. Printed per database: the statement's wall time p50 and
the server process's CPU time per statement (from /proc: the server must run
on this machine), over all rounds, with the load. --superuser adds the same
statements as the server's own user on the first database (no policy
applies): the floor. --explain prints each database's plan of the first
query.

--recalls N then times N whole recalls on each database (--home: a data
directory, for the model and the secret key), in this one process, query
by query in alternating order: the code is this checkout's for every
database (for schemas that differ in SQL alone, as policies do), the stores
are opened without migrating them, and each query is embedded once beforehand, so the model's
time is out of the figures. Printed per database: recall wall p50 / p95 and
its server processes' CPU time per recall.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import queries
from quality import database_url

TICKS = os.sysconf("SC_CLK_TCK")


def load() -> str:
    return "{:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def cpu_seconds(pid: int) -> float:
    """User and system time of a process of this machine, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def plans(url: str, user: str, texts: list[str]) -> tuple[list[str], list[list[str]]]:
    """The readable scopes of ``user`` and each query's matched words, as recall asks them."""
    from zero_memory.access.visibility import visibility
    from zero_memory.store.postgres.adapter import PostgresStore

    pending = PostgresStore(url, dim=0).pending_migrations()
    if pending:
        sys.exit(f"the first database is not at this code's schema (it lacks {', '.join(pending)}): name one that is")
    store = PostgresStore.open(url)
    with store.tx() as tx:
        readable = sorted(visibility(tx, user).readable)
        words = [list(tx.text_plan(text).matched) for text in texts]
    store.close()
    return readable, words


class Target:
    """One database, one connection, and its server process's CPU time."""

    def __init__(self, label: str, url: str, user: str | None) -> None:
        import psycopg

        self.label = label
        self.user = user
        self.conn = psycopg.connect(url, autocommit=True)
        row = self.conn.execute("SELECT pg_backend_pid()").fetchone()
        assert row is not None
        self.pid = int(row[0])
        self.wall_ms: list[float] = []
        self.cpu_s = 0.0
        self.statements = 0
        self.postings = 0

    def round(self, readable: list[str], words: list[list[str]]) -> None:
        from zero_memory.store.postgres.tx import POSTINGS, SET_CALLER

        cpu = cpu_seconds(self.pid)
        for matched in words:
            with self.conn.transaction():
                if self.user is not None:
                    self.conn.execute(SET_CALLER, (self.user,))
                started = time.perf_counter()
                found = self.conn.execute(POSTINGS, (readable, matched), binary=True).fetchall()
                self.wall_ms.append((time.perf_counter() - started) * 1000)
                self.postings += sum(len(seqs or b"") // 8 for _, seqs in found)
        self.cpu_s += cpu_seconds(self.pid) - cpu
        self.statements += len(words)

    def explain(self, readable: list[str], matched: list[str]) -> str:
        from zero_memory.store.postgres.tx import POSTINGS, SET_CALLER

        with self.conn.transaction():
            if self.user is not None:
                self.conn.execute(SET_CALLER, (self.user,))
            rows = self.conn.execute("EXPLAIN (ANALYZE, COSTS OFF) " + POSTINGS, (readable, matched)).fetchall()
        return "\n".join(r[0] for r in rows)

    def summary(self) -> str:
        return (
            f"{self.label}: wall p50 {statistics.median(self.wall_ms):.2f} ms | "
            f"server CPU {1000 * self.cpu_s / self.statements:.2f} ms a statement | {self.statements} statements "
            f"of {self.postings // self.statements} postings on average"
        )


class Memo:
    """The bundled model, each text embedded once: the databases' recalls differ by what the server does."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.model_id = model.model_id
        self.dim = model.dim
        self.done: dict[str, Any] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        for text in texts:
            if text not in self.done:
                self.done[text] = self.model.embed([text])[0]
        return np.stack([self.done[t] for t in texts])


class Recalls:
    """Whole recalls on one database, its store opened as it is (another checkout's schema: not migrated)."""

    def __init__(self, label: str, server_url: str, name: str, role: str, home: str, embedder: Memo) -> None:
        import psycopg

        from zero_memory.bootstrap import build_app
        from zero_memory.settings import Settings
        from zero_memory.store.postgres.adapter import PostgresStore

        url = database_url(server_url, name, role)
        store = PostgresStore(url, dim=embedder.dim)
        store._pool.open(wait=True, timeout=30)
        self.label = label
        self.app = build_app(
            Settings.from_environ({"ZM_HOME": home, "ZM_DATABASE_URL": url}), store=store, embedder=embedder
        )
        self.admin = psycopg.connect(database_url(server_url, name, ""), autocommit=True)
        self.name, self.role = name, role
        self.wall_ms: list[float] = []
        self.cpu_s = 0.0

    def backends_cpu(self) -> float:
        pids = self.admin.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND usename = %s", (self.name, self.role)
        ).fetchall()
        return sum(cpu_seconds(int(pid)) for (pid,) in pids)

    def recall(self, user: str, text: str, timed: bool) -> None:
        from zero_memory.access.caller import Caller
        from zero_memory.memory.recall import recall

        cpu = self.backends_cpu()
        started = time.perf_counter()
        recall(self.app, Caller(user, client="benchmark"), text, limit=10, channel=None)
        if timed:
            self.wall_ms.append((time.perf_counter() - started) * 1000)
            self.cpu_s += self.backends_cpu() - cpu

    def summary(self) -> str:
        ordered = sorted(self.wall_ms)
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        return (
            f"{self.label}: recall wall p50 {statistics.median(ordered):.2f} ms, p95 {p95:.2f} ms | "
            f"server CPU {1000 * self.cpu_s / len(ordered):.2f} ms a recall | {len(ordered)} recalls"
        )

    def close(self) -> None:
        self.app.close()
        self.admin.close()


def whole_recalls(args: argparse.Namespace, names: list[str]) -> None:
    from zero_memory.embedding.factory import build_embedder
    from zero_memory.settings import Settings

    texts = queries(args.recalls)
    embedder = Memo(build_embedder(Settings.from_environ({"ZM_HOME": args.home}).embedding_model))
    embedder.embed(texts)
    targets = [Recalls(name, args.database_url, name, args.role, args.home, embedder) for name in names]
    for target in targets:  # warm: every query once
        for text in texts:
            target.recall(args.user, text, timed=False)
    started_load = load()
    for number in range(args.rounds):
        for index, text in enumerate(texts):
            for target in targets if (number + index) % 2 == 0 else reversed(targets):
                target.recall(args.user, text, timed=True)
    for target in targets:
        print(target.summary(), flush=True)
        target.close()
    print(f"load {started_load} → {load()}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", required=True, help="the server, as its own user")
    parser.add_argument("--databases", required=True, help="comma-separated; the first at this code's schema")
    parser.add_argument("--role", default="zm_bench")
    parser.add_argument("--user", default="bench", help="the caller the transactions act for")
    parser.add_argument("--queries", type=int, default=120)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--superuser", action="store_true", help="also the first database with no policy")
    parser.add_argument("--explain", action="store_true")
    parser.add_argument("--recalls", type=int, default=0, help="then this many whole recalls on each database")
    parser.add_argument("--home", default=None, help="with --recalls: a data directory")
    args = parser.parse_args()
    if args.recalls and not args.home:
        parser.error("--recalls needs --home")
    names = args.databases.split(",")

    texts = queries(args.queries)
    readable, words = plans(database_url(args.database_url, names[0], args.role), args.user, texts)
    targets = [Target(name, database_url(args.database_url, name, args.role), args.user) for name in names]
    if args.superuser:
        targets.append(Target(f"{names[0]} (superuser)", database_url(args.database_url, names[0], ""), None))
    postings = sum(len(w) for w in words)
    print(f"{len(texts)} queries, {postings} matched words, scopes {readable} | load {load()}", flush=True)
    if args.explain:
        for target in targets:
            print(f"-- {target.label}\n{target.explain(readable, words[0])}", flush=True)
    for target in targets:  # warm: every posting read once
        target.round(readable, words)
        target.wall_ms.clear()
        target.cpu_s, target.statements, target.postings = 0.0, 0, 0
    started_load = load()
    for number in range(args.rounds):
        for target in targets if number % 2 == 0 else reversed(targets):
            target.round(readable, words)
    for target in targets:
        print(target.summary(), flush=True)
    print(f"load {started_load} → {load()}", flush=True)
    for target in targets:
        target.conn.close()
    if args.recalls:
        whole_recalls(args, names)


if __name__ == "__main__":
    main()
