"""Load from another process: N MCP clients over streamable HTTP for a fixed time, then the books are checked.

Used by ``tests/reliability/test_load.py`` (short) and ``benchmarks/load.py``
(long). Each client is an asyncio task with its own connection and MCP
session, speaking as one of the users. The mix: ``remember`` of a fresh
statement or of one from a small pool shared by the user's clients (written
again and again, by several clients at once: each client's first call writes
the pool's first text), ``recall``, and now and then
``scan_hygiene``. Afterwards, with the server still up:

- every call succeeded (an error result, an exception or a timeout is an error);
- no acknowledged write is lost: each ``created`` id is in the database with its
  text, live, and readable;
- none is duplicated: each text of the run is stored once per user, every
  acknowledgement of it names that one memory, and exactly one said ``created``;
- every recall hit lies in the caller's own scopes;
- the database is consistent once the hygiene runs the load started are over.
"""

from __future__ import annotations

import random
import statistics
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import anyio

from tests.mcp.helpers import connect
from tests.reliability import aio
from tests.reliability.consistency import problems
from tests.reliability.crash import WORDS, sentence
from tests.reliability.service import Service
from zero_memory.domain.records import RunStatus
from zero_memory.store import SYSTEM, system_tx

CALL_TIMEOUT_S = 60
POOL_SIZE = 4


@dataclass(frozen=True)
class Mix:
    """Shares of the calls; the rest are ``recall``."""

    remember: float = 0.5
    repeat: float = 0.3  # of remembers: a text from the user's shared pool
    scan: float = 0.02


@dataclass
class LoadLog:
    tag: str
    started: float = 0.0
    elapsed_s: float = 0.0
    latencies_ms: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: list[str] = field(default_factory=list)
    # (user, text) -> every acknowledgement: (memory id, status)
    acks: dict[tuple[str, str], list[tuple[str, str]]] = field(default_factory=lambda: defaultdict(list))
    pooled: set[tuple[str, str]] = field(default_factory=set)
    runs: set[str] = field(default_factory=set)


def pool(tag: str, user: str) -> list[str]:
    rng = random.Random(f"{tag}-{user}")
    return [f"{tag} {user} shared {i}: {sentence(rng)}" for i in range(POOL_SIZE)]


def _next_call(rng: random.Random, mix: Mix, shared: list[str], label: str, project: str) -> tuple[str, dict[str, Any]]:
    draw = rng.random()
    if draw < mix.scan:
        return "scan_hygiene", {"wait": False}
    if draw < mix.scan + mix.remember:
        text = rng.choice(shared) if rng.random() < mix.repeat else f"{label}: {sentence(rng)}"
        return "remember", {"content": text, "kind": rng.choice(("fact", "gotcha", "episode")), "project_hint": project}
    return "recall", {"query": " ".join(rng.sample(WORDS, 3)), "project_hint": project}


async def _client(
    service: Service, log: LoadLog, n: int, user: str, deadline: float, mix: Mix, seed: int, min_calls: int
) -> None:
    rng = random.Random(seed)
    shared = pool(log.tag, user)
    project = f"/srv/load/{log.tag}/{user}"
    try:
        async with connect(service.deployment, "http", "auto", user=user, client_name=f"load-{n}") as client:
            count = 0
            # A crowded machine may get through only the opening write in the time given: every client makes
            # at least min_calls calls, so the run always exercises more than its first write.
            while time.monotonic() < deadline or count < min_calls:
                count += 1
                if count == 1:
                    # Every client opens with the same text as the user's other clients, all at once.
                    tool, arguments = "remember", {"content": shared[0], "kind": "fact", "project_hint": project}
                else:
                    tool, arguments = _next_call(rng, mix, shared, f"{log.tag} {user} c{n} #{count}", project)
                if tool == "remember" and arguments["content"] in shared:
                    log.pooled.add((user, arguments["content"]))
                started = time.perf_counter()
                try:
                    with anyio.fail_after(CALL_TIMEOUT_S):
                        result = await client.call_tool(tool, arguments)
                except TimeoutError:
                    log.errors.append(f"client {n}: {tool} timed out after {CALL_TIMEOUT_S}s")
                    continue
                log.latencies_ms[tool].append((time.perf_counter() - started) * 1000)
                answer = result.structured_content
                if result.is_error or answer is None:
                    text_of = "".join(getattr(block, "text", "") for block in result.content)
                    log.errors.append(f"client {n}: {tool} failed: {text_of[:300]}")
                elif tool == "remember":
                    log.acks[(user, arguments["content"])].append((answer["id"], answer["status"]))
                elif tool == "recall":
                    foreign = [h["scope"] for h in answer["hits"] if h["scope"].split(".")[1] != user]
                    if foreign:
                        log.errors.append(f"client {n}: recall returned another user's scopes {foreign}")
                else:
                    log.runs.add(answer["run_id"])
    except Exception as error:  # an error of the run: reported, not raised
        log.errors.append(f"client {n}: connection failed: {error!r}"[:400])


async def drive(
    service: Service,
    *,
    clients: int,
    seconds: float,
    users: list[str],
    mix: Mix = Mix(),
    seed: int = 0,
    min_calls: int = 1,
) -> LoadLog:
    """Run the load for ``seconds`` (and until each client made ``min_calls``); calls in flight are waited for."""
    log = LoadLog(tag=f"load-{uuid.uuid4().hex[:8]}")
    log.started = time.monotonic()
    deadline = log.started + seconds
    async with anyio.create_task_group() as tasks:
        for n in range(clients):
            user = users[n % len(users)]
            tasks.start_soon(_client, service, log, n, user, deadline, mix, seed * 1000 + n, min_calls)
    log.elapsed_s = time.monotonic() - log.started
    return log


def run(
    service: Service,
    *,
    clients: int,
    seconds: float,
    users: list[str],
    mix: Mix = Mix(),
    seed: int = 0,
    min_calls: int = 1,
) -> LoadLog:
    return aio.run(
        lambda: drive(service, clients=clients, seconds=seconds, users=users, mix=mix, seed=seed, min_calls=min_calls)
    )


@dataclass
class Books:
    """What the database says about the run's writes."""

    acknowledged: int = 0
    created: int = 0
    absorbed: int = 0
    lost: list[str] = field(default_factory=list)
    duplicated: list[str] = field(default_factory=list)
    inconsistent: list[str] = field(default_factory=list)
    hygiene_runs: int = 0

    @property
    def clean(self) -> bool:
        return not (self.lost or self.duplicated or self.inconsistent)


def wait_for_runs(service: Service, timeout_s: float = 300) -> None:
    """Every hygiene run finished (the load starts them in the background)."""
    deadline = time.monotonic() + timeout_s
    with service.store() as store:
        while time.monotonic() < deadline:
            with system_tx(store, "test") as tx:
                if not tx.runs_with_status(RunStatus.RUNNING):
                    return
            time.sleep(0.5)
    raise AssertionError(f"hygiene runs still running after {timeout_s}s")


def audit(service: Service, log: LoadLog) -> Books:
    """Count every write of the run against the database."""
    wait_for_runs(service)
    books = Books(hygiene_runs=len(log.runs))
    with service.store() as store:
        with system_tx(store, "test") as tx:
            stored: dict[tuple[str, str], list[str]] = defaultdict(list)
            for memory in tx.iter_memories():
                if memory.content.startswith(log.tag + " "):
                    stored[(memory.owner, memory.content)].append(memory.id)
            acked_ids = {memory_id for acks in log.acks.values() for memory_id, _ in acks}
            found = tx.get_memories(list(acked_ids), SYSTEM)
        books.inconsistent = problems(store)
    for (user, text), acks in log.acks.items():
        books.acknowledged += len(acks)
        statuses = [status for _, status in acks]
        books.created += statuses.count("created")
        books.absorbed += statuses.count("absorbed")
        ids = {memory_id for memory_id, _ in acks}
        rows = stored.get((user, text), [])
        where = f"{user}: {text[:60]!r}"
        for memory_id in ids:
            row = found.get(memory_id)
            if row is None or row.content != text or row.owner != user:
                books.lost.append(f"{where}: acknowledged as {memory_id}, not in the database")
            elif not row.live:
                books.lost.append(f"{where}: {memory_id} is {row.invalidated_reason}")
        if len(rows) != 1 or len(ids) != 1 or statuses.count("created") != 1:
            books.duplicated.append(f"{where}: stored as {rows}, acknowledged as {sorted(ids)} ({statuses})")
    unacknowledged = set(stored) - set(log.acks)
    books.duplicated += [f"{user}: {text[:60]!r} stored but never acknowledged" for user, text in unacknowledged]
    return books


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def report(log: LoadLog, books: Books, **context: Any) -> dict[str, Any]:
    tools = {}
    for tool, values in sorted(log.latencies_ms.items()):
        tools[tool] = {
            "calls": len(values),
            "per_s": round(len(values) / log.elapsed_s, 1),
            "p50_ms": round(statistics.median(values), 1),
            "p95_ms": round(percentile(values, 95), 1),
            "max_ms": round(max(values), 1),
        }
    calls = sum(len(v) for v in log.latencies_ms.values())
    return {
        **context,
        "elapsed_s": round(log.elapsed_s, 1),
        "calls": calls,
        "calls_per_s": round(calls / log.elapsed_s, 1),
        "errors": len(log.errors),
        "error_samples": log.errors[:5],
        "tools": tools,
        "writes": {
            "acknowledged": books.acknowledged,
            "created": books.created,
            "absorbed": books.absorbed,
            "distinct_pooled_texts": len(log.pooled),
            "lost": len(books.lost),
            "duplicated": len(books.duplicated),
        },
        "hygiene_runs_started": books.hygiene_runs,
        "consistent": not books.inconsistent,
        "problems": (books.lost + books.duplicated + books.inconsistent)[:10],
    }
