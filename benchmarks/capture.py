"""Capture benchmark: conversation chunks ingested per second, with a zero-latency fake extraction model.

    python benchmarks/capture.py [--chunks 200] [--statements 3] [--database-url URL] [--json]

The model answers at once (an in-process fake, its answer still parsed and
validated), so what is measured is zero-memory's own work per chunk:
accepting it (validation, the content guard over the whole chunk, the
allowance, the target, the staging row) and extracting it (claiming it, the
answer, each statement through the write path — embedding, the yield and
dedup probes, the insert, audit — and the bookkeeping). Two runs on fresh
databases:

- sequential: each chunk is accepted, then extracted, before the next; the
  time splits cleanly into acceptance and extraction, and "extraction's share"
  is the part spent extracting (with the model's own part inside it);
- pipelined: every chunk accepted as fast as it comes, extraction on the
  app's background threads; chunks per second from the first acceptance to
  the last memory written.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import memories

from zero_memory.access.caller import Caller
from zero_memory.access.users import add_user
from zero_memory.app import App
from zero_memory.bootstrap import build_app
from zero_memory.capture import extract
from zero_memory.capture.ingest import ingest
from zero_memory.capture.models import IngestRequest
from zero_memory.judge.base import AnyResult, Judge
from zero_memory.judge.fake import FakeJudge
from zero_memory.judge.ledger import AttributedJudge
from zero_memory.judge.owners import ledger_recorder
from zero_memory.settings import Settings


class Timer:
    """Seconds spent inside the wrapped callables, by name."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started

        return timed


class TimedJudge:
    """The fake model, with the time of each call counted."""

    def __init__(self, inner: Judge, timer: Timer) -> None:
        self.inner = inner
        self.provider = inner.provider
        self.offer_mode = inner.offer_mode
        self._ask = timer.wrap("model", inner.ask)

    def model_for(self, question: Any) -> str:
        return self.inner.model_for(question)

    def ask(self, question: Any) -> AnyResult:
        result: AnyResult = self._ask(question)
        return result


def conversation(n: int, statements: int) -> tuple[str, list[dict[str, str]]]:
    """Chunk ``n``: a conversation of a few turns per statement, and the statements a model would find in it."""
    said = [
        {"content": f"{content} (conversation {n})", "kind": str(kind), "scope_hint": "project"}
        for content, kind in memories(statements, seed=n)
    ]
    turns = []
    for statement in said:
        turns.append(f"user: can you check how this works? {statement['content'].lower()}")
        turns.append(f"assistant: I looked into it. {statement['content']} I will keep that in mind.")
        turns.append("user: thanks, go on with the change and run the tests.")
    return "\n\n".join(turns) + "\n", said


def fresh_app(database_url: str | None, model: FakeJudge, timer: Timer) -> App:
    home = Path(tempfile.mkdtemp(prefix="zm-bench-capture-"))
    env = {"ZM_HOME": str(home), "ZM_EXTRACT_DAILY_TOKENS": "1000000000"}
    if database_url:
        env["ZM_DATABASE_URL"] = database_url
    app = build_app(Settings.from_environ(env))
    with app.store.tx(write=True) as tx:
        add_user(tx, "bench", is_local=True)
    record = ledger_recorder(app.store, app.clock)
    timed = TimedJudge(model, timer)
    app.judge_factory = lambda owner, run_id: AttributedJudge(timed, owner=owner, run_id=run_id, record=record)
    app.embedder.embed(["load the model before timing anything"])
    return app


def run(database_url: str | None, chunks: int, statements: int, *, pipelined: bool) -> dict[str, Any]:
    timer = Timer()
    model = FakeJudge(input_tokens=1_500, output_tokens=150)
    app = fresh_app(database_url, model, timer)
    caller = Caller("bench", client="benchmark")
    # Time the whole extraction of a chunk, and the writes of its statements inside it.
    original_extract, original_remember = extract.extract_chunk, extract.remember
    extract.extract_chunk = timer.wrap("extraction", original_extract)
    extract.remember = timer.wrap("writes", original_remember)
    accept_ms: list[float] = []
    chars = 0
    try:
        conversations = [conversation(n, statements) for n in range(chunks)]
        started = time.perf_counter()
        for n, (text, said) in enumerate(conversations):
            model.enqueue(said)
            chars += len(text)
            request = IngestRequest(transcript_chunk=text, conversation_id=f"bench-{n}", project_hint="bench-project")
            t0 = time.perf_counter()
            result = ingest(app, caller, request)
            accept_ms.append((time.perf_counter() - t0) * 1000)
            assert result.status == "accepted", result
            if not pipelined:
                app.wait_idle(timeout=600)
        app.wait_idle(timeout=3600)
        total = time.perf_counter() - started
    finally:
        extract.extract_chunk, extract.remember = original_extract, original_remember
    with app.store.tx() as tx:
        done = tx.list_chunks(owner="bench", limit=chunks + 10)
        written = len(tx.live_memories(owner="bench", limit=chunks * statements + 10))
    app.close()
    assert all(c.status.value == "done" for c in done) and len(done) == chunks, "every chunk extracted"
    accepting = sum(accept_ms) / 1000
    extracting = timer.seconds.get("extraction", 0.0)
    return {
        "backend": app.store.backend,
        "mode": "pipelined" if pipelined else "sequential",
        "chunks": chunks,
        "statements_per_chunk": statements,
        "chars_per_chunk": round(chars / chunks),
        "memories_written": written,
        "chunks_per_s": round(chunks / total, 2),
        "accept_p50_ms": round(statistics.median(accept_ms), 2),
        "extract_ms_per_chunk": round(extracting / chunks * 1000, 2),
        "model_ms_per_chunk": round(timer.seconds.get("model", 0.0) / chunks * 1000, 3),
        "writes_ms_per_chunk": round(timer.seconds.get("writes", 0.0) / chunks * 1000, 2),
        "extraction_share": round(extracting / (accepting + extracting), 3),
    }


def fresh_database(url: str, tag: str) -> str:
    """A new empty PostgreSQL database on the server ``url`` names."""
    from urllib.parse import urlsplit, urlunsplit

    import psycopg

    name = f"zm_bench_capture_{tag}_{int(time.time())}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=200)
    parser.add_argument("--statements", type=int, default=3, help="statements the model finds per chunk")
    parser.add_argument("--database-url", default=None, help="a PostgreSQL server URL (default: SQLite)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = []
    for pipelined in (False, True):
        url = fresh_database(args.database_url, str(int(pipelined))) if args.database_url else None
        row = run(url, args.chunks, args.statements, pipelined=pipelined)
        rows.append(row)
        if not args.json:
            print(
                f"{row['backend']:>8} {row['mode']:>10}: {row['chunks']} chunks of ~{row['chars_per_chunk']:,} chars, "
                f"{row['statements_per_chunk']} statements each -> {row['chunks_per_s']:>7} chunks/s | "
                f"accept p50 {row['accept_p50_ms']} ms | extract {row['extract_ms_per_chunk']} ms/chunk "
                f"(model {row['model_ms_per_chunk']} ms, writes {row['writes_ms_per_chunk']} ms) | "
                f"extraction's share {row['extraction_share']:.0%}",
                flush=True,
            )
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
