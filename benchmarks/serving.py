"""Serving benchmark: where one MCP call over streamable HTTP spends its time, and eight clients' throughput.

    python benchmarks/serving.py [--calls 150] [--clients 8] [--seconds 15] [--rounds 1]
                                 [--baseline CHECKOUT] [--workers 1,2] [--processes 2]
                                 [--server-env NAME=VALUE] [--json]

Three parts, all on SQLite and a small database (a few hundred memories per user):

1. **Layers, in this process** (no HTTP): the median time of each step a call
   goes through, timed one by one on an App over its own data directory —
   the bearer token's look-up, a hand-off to a worker thread and back,
   argument validation, the query or text embedding, the service (remember or
   recall, embedding included), the answer's serialisation, the usage event —
   and ``ZMServer.call_tool`` as a whole.
2. **One client over HTTP**: a real ``zm serve``, one SDK client calling
   sequentially; per call, the latency the client sees, the server's CPU time
   (from /proc) and the client's. ``list_conflicts`` on an empty review queue
   is the cheapest tool (the 2026 protocol has no ``ping``): its server CPU is
   mostly the fixed cost of HTTP, the bearer check and the SDK. What a call
   costs the server beyond ``call_tool`` in process is the transport's share.
   Then eight tasks call that app at once, half remember and half recall:
   calls/s, latency and CPU per call with no socket and no client.
3. **Load**: ``--clients`` SDK clients (asyncio tasks in this process, half
   alice, half bob), half remember and half recall, for ``--seconds``;
   calls/s, p50/p95 per tool, the server's CPU use (cores, and per call: in all and on the event loops,
   whose threads run uvicorn, Starlette, the SDK and ``invoke``), the clients' CPU per call, and the books
   checked as in benchmarks/load.py (no error, no write lost or duplicated).

``--baseline CHECKOUT`` runs parts 2 and 3 also against the server of another
checkout of the project (its ``src`` first on PYTHONPATH, this environment's
packages), alternating with this one ``--rounds`` times, so a comparison is
side by side on the same machine in one run. ``--workers 1,2`` repeats part 3
with ``zm serve --workers N`` for each N and each server, ``--processes 2`` with
that many separate ``zm serve`` on one data directory, the clients spread over
them; ``--server-env`` passes a variable to every server. The load
average (``uptime``) is printed before and after each part.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import anyio  # noqa: E402
from procstat import children, cpu_s, descendants  # noqa: E402
from tests.mcp.helpers import connect  # noqa: E402
from tests.reliability import aio, load  # noqa: E402
from tests.reliability.crash import WORDS, sentence  # noqa: E402
from tests.reliability.service import Service, deploy  # noqa: E402

USERS = ["alice", "bob"]
SEED_MEMORIES = 300
ROUNDS = 5


def loadavg() -> float:
    return round(os.getloadavg()[0], 2)


def median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 3)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process, its reaped children and its live descendants (``zm serve
    --workers`` and each one's query process)."""
    return cpu_s(pid, reaped=True) + sum(cpu_s(each) for each in descendants(pid))


def rss_mb(pid: int) -> float:
    """Resident memory of a process and its live descendants (the workers of ``zm serve --workers``, the query
    processes), MB."""
    total = 0
    for each in [pid, *descendants(pid)]:
        status = Path(f"/proc/{each}/status").read_text()
        total += int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:")))
    return round(total / 1024, 1)


def _workers(pid: int) -> list[int]:
    """The worker processes of ``zm serve --workers`` (not multiprocessing's resource tracker)."""
    return [child for child in children(pid) if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes()]


def calls_of(rng_seed: int, count: int, label: str) -> list[tuple[str, dict[str, Any]]]:
    import random

    rng = random.Random(rng_seed)
    project = "/srv/serving/bench"
    calls: list[tuple[str, dict[str, Any]]] = []
    for n in range(count):
        calls.append(
            ("remember", {"content": f"{label} #{n}: {sentence(rng)}", "kind": "fact", "project_hint": project})
        )
        calls.append(("recall", {"query": " ".join(rng.sample(WORDS, 3)), "project_hint": project}))
    return calls


# --- 1. layers, in process ------------------------------------------------------------------------

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "serving-bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def envelope(number: int, tool: str, arguments: dict[str, Any], token: str) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """The body and headers of one 2026-07-28 ``tools/call`` POST, as the SDK client sends it."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": number,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments, "_meta": META},
        }
    ).encode()
    headers = [
        (b"authorization", f"Bearer {token}".encode()),
        (b"accept", b"application/json, text/event-stream"),
        (b"content-type", b"application/json"),
        (b"mcp-protocol-version", META["io.modelcontextprotocol/protocolVersion"].encode()),
        (b"mcp-method", b"tools/call"),
        (b"mcp-name", tool.encode()),
        (b"user-agent", b"serving-bench"),
    ]
    return body, headers


def structured(tool: str, status: int, payload: bytes) -> dict[str, Any]:
    """The structured answer of a tools/call response; raises on anything but success."""
    if status != 200:
        raise RuntimeError(f"{tool}: HTTP {status}: {payload[:200]!r}")
    if not payload.lstrip().startswith(b"{"):
        # A call slower than the SDK's 15 s window is answered as an event stream: the answer is its last event.
        events = [line[5:] for line in payload.splitlines() if line.startswith(b"data:")]
        payload = events[-1] if events else payload
    answer = json.loads(payload)
    result = answer.get("result") or {}
    if answer.get("error") or result.get("isError") or result.get("structuredContent") is None:
        raise RuntimeError(f"{tool} failed: {str(answer)[:300]}")
    content: dict[str, Any] = result["structuredContent"]
    return content


class Asgi:
    """Requests to /mcp handed straight to the ASGI app: no socket, no HTTP parser, no client."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.token = token
        self.count = 0

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.count += 1
        body, headers = envelope(self.count, tool, arguments, self.token)
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": "/mcp",
            "raw_path": b"/mcp",
            "query_string": b"",
            "root_path": "",
            "headers": [(b"host", b"127.0.0.1:8787"), *headers],
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8787),
        }
        delivered = False
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            await anyio.sleep_forever()
            raise AssertionError("unreachable")

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await self.app(scope, receive, send)
        return structured(tool, sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:]))


class Lean:
    """A minimal MCP client over HTTP: one POST per call, the answer's JSON read as is.

    What the SDK client adds on top (its own validation of every answer against
    the tool's output schema, its session object) costs this process several
    ms of CPU per call, which on two cores the server would pay for.
    """

    def __init__(self, http: Any, url: str, token: str) -> None:
        self.http = http
        self.url = f"{url}/mcp"
        self.token = token
        self.count = 0

    async def call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        self.count += 1
        body, headers = envelope(self.count, tool, arguments, self.token)
        response = await self.http.post(self.url, content=body, headers={k.decode(): v.decode() for k, v in headers})
        return structured(tool, response.status_code, response.content)


def cpu_ms(samples: list[float]) -> float:
    return round(sum(samples) / len(samples) * 1000, 3)


async def _per_call(make: Callable[[int], Awaitable[Any] | Any], count: int) -> float:
    """Mean CPU ms (this process, every thread) of ``count`` calls of ``make(n)``, awaited when a coroutine."""
    import inspect

    started = time.process_time()
    for n in range(count):
        result = make(n)
        if inspect.isawaitable(result):
            await result
    return round((time.process_time() - started) / count * 1000, 3)


def layers(calls: int) -> dict[str, Any]:
    """Mean CPU ms per call of each layer, by subtraction from the layer around it."""
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
    from mcp.server.auth.provider import AccessToken
    from starlette.routing import Route

    from zero_memory.access.caller import Caller
    from zero_memory.access.users import add_user, issue_token
    from zero_memory.bootstrap import build_app
    from zero_memory.mcp.http import BearerAuth
    from zero_memory.mcp.identity import Identity
    from zero_memory.mcp.server import ZMServer, build_server
    from zero_memory.mcp.tooling import Outcome, ToolCall, record_usage
    from zero_memory.server.app import create_app
    from zero_memory.settings import Settings

    _time_begin_immediate()
    home = Path(tempfile.mkdtemp(prefix="zm-serving-layers-"))
    app = build_app(Settings.from_environ({"ZM_HOME": str(home)}))
    with app.store.tx(write=True) as tx:
        add_user(tx, "alice")
        token = issue_token(tx, "alice")
    asgi = create_app(app, dashboard=False)
    route = next(r for r in asgi.routes if isinstance(r, Route) and r.path == "/mcp")
    bearer = route.app
    assert isinstance(bearer, BearerAuth)
    mcp_app = bearer.app
    user = AuthenticatedUser(AccessToken(token="", client_id="alice", subject="alice", scopes=[]))
    caller = Caller("alice", client="serving-bench", session_id=None)
    client = Asgi(asgi, token)
    figures: dict[str, Any] = {}

    async def unauthenticated(scope: Any, receive: Any, send: Any) -> None:
        await mcp_app({**scope, "user": user}, receive, send)

    async def tool_layers(tool: str, spec: Any, server: ZMServer) -> dict[str, float]:
        """Each variant in turn, ROUNDS times over: the median of its per-round means resists the load's spikes."""
        work = [a for t, a in calls_of(7, calls, f"layer-{tool}") if t == tool] or [{}] * calls
        fresh = _fresh(work, tool)
        batch = max(1, calls // ROUNDS)
        results: list[Any] = []

        async def without_bearer(n: int) -> Any:
            route.app = unauthenticated
            try:
                return await client.call(tool, next(fresh))
            finally:
                route.app = bearer

        def body(n: int) -> None:
            results.append(spec.fn(ToolCall(app, caller), spec.parse(next(fresh))))

        variants: dict[str, Callable[[int], Any]] = {
            "HTTP app in process": lambda n: client.call(tool, next(fresh)),
            "without the bearer check": without_bearer,
            "ZMServer.call_tool": lambda n: server.call_tool(tool, next(fresh)),
            "tool body (the service)": body,
            "argument validation": lambda n: spec.parse(work[n % len(work)]),
            "answer serialisation": lambda n: spec.render(results[n % len(results)]),
        }
        rounds: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(ROUNDS):
            for name, make in variants.items():
                rounds[name].append(await _per_call(make, batch))
        return {name: round(statistics.median(values), 3) for name, values in rounds.items()}

    async def eight_at_once() -> dict[str, float]:
        """Eight tasks calling the HTTP app in process at once, half remember and half recall."""
        work = calls_of(9, calls * 2, "eight")
        latencies: list[float] = []

        async def one(k: int) -> None:
            for n in range(k, len(work), 8):
                started = time.perf_counter()
                await client.call(*work[n])
                latencies.append(time.perf_counter() - started)

        began = len(BEGIN_WAITS)
        cpu, wall = time.process_time(), time.perf_counter()
        async with anyio.create_task_group() as tasks:
            for k in range(8):
                tasks.start_soon(one, k)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        waits = BEGIN_WAITS[began:]
        return {
            "s waiting in BEGIN IMMEDIATE": round(sum(waits), 2),
            "write transactions": len(waits),
            "calls/s": round(len(work) / wall, 1),
            "p50 ms": round(percentile(latencies, 50) * 1000, 1),
            "p95 ms": round(percentile(latencies, 95) * 1000, 1),
            "CPU ms per call": round(cpu / len(work) * 1000, 2),
            "cores used": round(cpu / wall, 2),
        }

    async def run() -> None:
        import anyio.to_thread

        async with asgi.router.lifespan_context(asgi):
            for tool, arguments in calls_of(1, SEED_MEMORIES, "seed"):
                if tool == "remember":
                    await client.call(tool, arguments)
            # A server of the same tools, called directly (its caller is the local user, not a request's).
            server = build_server(app, Identity(local_uid="alice"))
            specs = server.specs
            for tool in ("list_conflicts", "recall", "remember"):
                label = {"list_conflicts": "list_conflicts (empty queue)"}.get(tool, tool)
                figures[label] = await tool_layers(tool, specs[tool], server)
            shared: dict[str, float] = {}
            shared["bearer token look-up"] = await _per_call(lambda n: bearer.user_of(token), calls)
            shared["usage event"] = await _per_call(lambda n: record_usage(app, caller, "recall", Outcome("ok")), calls)
            shared["thread hand-off and back"] = await _per_call(
                lambda n: anyio.to_thread.run_sync(lambda: None), calls
            )
            shared["query embedding"] = await _per_call(
                lambda n: app.embedder.embed([f"query {n} of the bench"]), calls
            )
            figures["shared"] = shared
            figures["eight at once"] = await eight_at_once()

    anyio.run(run)
    app.close()
    return figures


BEGIN_WAITS: list[float] = []


def _time_begin_immediate() -> None:
    """Every SQLite connection opened in this process from now on records how long each BEGIN IMMEDIATE waited."""
    import sqlite3

    if getattr(sqlite3.connect, "timed", False):
        return
    original = sqlite3.connect

    class Timed(sqlite3.Connection):
        def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
            if sql != "BEGIN IMMEDIATE":
                return super().execute(sql, *args)
            started = time.perf_counter()
            try:
                return super().execute(sql, *args)
            finally:
                BEGIN_WAITS.append(time.perf_counter() - started)

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        return original(*args, **kwargs, factory=Timed)

    connect.timed = True  # type: ignore[attr-defined]
    sqlite3.connect = connect  # type: ignore[assignment]


def _fresh(work: list[dict[str, Any]], tool: str) -> Any:
    """Endless arguments for ``tool``: remember gets a new text each time (no repeat is absorbed)."""
    n = 0
    while True:
        arguments = dict(work[n % len(work)])
        if tool == "remember":
            arguments["content"] = f"{arguments['content']} (take {n})"
        n += 1
        yield arguments


# --- 2. one client over HTTP ----------------------------------------------------------------------


@dataclass
class Server:
    label: str
    env: dict[str, str]
    args: tuple[str, ...] = ()


def seeded(server: Server) -> Service:
    home = Path(tempfile.mkdtemp(prefix="zm-serving-"))
    return deploy(home, None, users=USERS, env=server.env)


def start(service: Service, server: Server) -> None:
    from tests.mcp.helpers import start_server

    service.starts += 1
    log = service.deployment.home / f"serve-{service.starts}.log"
    service.logs.append(log)
    service.process, service.deployment.url = start_server(service.deployment.env, log, *server.args)
    service.deployment.log = log


async def _sequential(service: Service, calls: int) -> dict[str, Any]:
    assert service.process is not None
    pid = service.process.pid
    figures: dict[str, Any] = {}
    async with connect(service.deployment, "http", "auto", user="alice", client_name="serving-bench") as client:
        # Warm up: the model loads on the first embedding; seed a few hundred memories to search.
        for tool, arguments in calls_of(1, SEED_MEMORIES // 3, "seed"):
            await client.call_tool(tool, arguments)

        async def measure(name: str, make: list[Callable[[], Awaitable[Any]]]) -> None:
            wall: list[float] = []
            server_before, client_before = process_cpu_s(pid), time.process_time()
            for call in make:
                started = time.perf_counter()
                await call()
                wall.append(time.perf_counter() - started)
            count = len(make)
            figures[name] = {
                "p50_ms": median_ms(wall),
                "p95_ms": round(percentile(wall, 95) * 1000, 2),
                "server_cpu_ms": round((process_cpu_s(pid) - server_before) / count * 1000, 2),
                "client_cpu_ms": round((time.process_time() - client_before) / count * 1000, 2),
            }

        await measure("list_conflicts", [_bound(client.call_tool, "list_conflicts", {}) for _ in range(calls)])
        work = calls_of(4, calls, f"seq-{time.time_ns()}")
        for tool in ("remember", "recall"):
            mine = [arguments for name, arguments in work if name == tool]
            await measure(tool, [_bound(client.call_tool, tool, arguments) for arguments in mine])
    return figures


def _bound(fn: Callable[..., Awaitable[Any]], *args: Any) -> Callable[[], Awaitable[Any]]:
    async def call() -> Any:
        result = await fn(*args)
        if getattr(result, "is_error", False):
            raise RuntimeError(f"{args[0]} failed: {result.content}")
        return result

    return call


def one_client(server: Server, calls: int) -> dict[str, Any]:
    service = seeded(server)
    start(service, server)
    try:
        return aio.run(lambda: _sequential(service, calls))
    finally:
        service.stop()


# --- 3. load --------------------------------------------------------------------------------------


async def _lean_client(
    service: Service, url: str, log: load.LoadLog, n: int, user: str, deadline: float, seed: int
) -> None:
    """One client of the load: load.py's mix and bookkeeping without scan_hygiene, over ``Lean``."""
    import random

    import httpx2

    rng = random.Random(seed)
    shared = load.pool(log.tag, user)
    project = f"/srv/load/{log.tag}/{user}"
    mix = load.Mix(scan=0.0)
    try:
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(60)) as http:
            client = Lean(http, url, service.deployment.tokens[user])
            count = 0
            while time.monotonic() < deadline or count < 1:
                count += 1
                if count == 1:
                    tool, arguments = "remember", {"content": shared[0], "kind": "fact", "project_hint": project}
                else:
                    tool, arguments = load._next_call(rng, mix, shared, f"{log.tag} {user} c{n} #{count}", project)
                if tool == "remember" and arguments["content"] in shared:
                    log.pooled.add((user, arguments["content"]))
                started = time.perf_counter()
                try:
                    answer = await client.call(tool, arguments)
                except RuntimeError as error:
                    log.errors.append(f"client {n}: {error}"[:400])
                    continue
                log.latencies_ms[tool].append((time.perf_counter() - started) * 1000)
                if tool == "remember":
                    log.acks[(user, arguments["content"])].append((answer["id"], answer["status"]))
                else:
                    foreign = [h["scope"] for h in answer["hits"] if h["scope"].split(".")[1] != user]
                    if foreign:
                        log.errors.append(f"client {n}: recall returned another user's scopes {foreign}")
    except Exception as error:  # an error of the run: reported, not raised
        log.errors.append(f"client {n}: connection failed: {error!r}"[:400])


async def _lean_load(service: Service, urls: list[str], clients: int, seconds: float, seed: int) -> load.LoadLog:
    import uuid

    log = load.LoadLog(tag=f"load-{uuid.uuid4().hex[:8]}")
    log.started = time.monotonic()
    async with anyio.create_task_group() as tasks:
        for n in range(clients):
            user = USERS[n % len(USERS)]
            url = urls[n % len(urls)]
            tasks.start_soon(_lean_client, service, url, log, n, user, log.started + seconds, seed * 1000 + n)
    log.elapsed_s = time.monotonic() - log.started
    return log


def under_load(
    server: Server, clients: int, seconds: float, seed: int, client: str, processes: int = 1
) -> dict[str, Any]:
    """``clients`` clients for ``seconds``; ``processes`` > 1 starts that many ``zm serve`` on the one data
    directory (each on its own port, as behind a load-balancing proxy) and spreads the lean clients over them."""
    from tests.mcp.helpers import start_server, stop_server

    service = seeded(server)
    start(service, server)
    others = []
    try:
        for k in range(processes - 1):
            log_path = service.deployment.home / f"serve-extra-{k}.log"
            others.append(start_server(service.deployment.env, log_path, *server.args))
        assert service.process is not None
        pids = [service.process.pid] + [process.pid for process, _ in others]
        urls = [service.url] + [url for _, url in others]
        before_load = loadavg()
        # Warm the model and the database first, as a server that has run a while.
        for url in urls:
            service.deployment.url = url
            aio.run(lambda: _warm(service))
        service.deployment.url = urls[0]
        cpu_before = sum(process_cpu_s(pid) for pid in pids)
        workers_before = {child: cpu_s(child) for child in _workers(pids[0])}
        loops = list(workers_before) or pids
        loops_before = sum(cpu_s(pid, thread=pid) for pid in loops)
        client_before, wall_before = time.process_time(), time.monotonic()
        if client == "sdk":
            log = load.run(service, clients=clients, seconds=seconds, users=USERS, seed=seed, mix=load.Mix(scan=0.0))
        else:
            log = aio.run(lambda: _lean_load(service, urls, clients, seconds, seed))
        wall = time.monotonic() - wall_before
        server_cpu = sum(process_cpu_s(pid) for pid in pids) - cpu_before
        # Each worker's share of the cores (zm serve --workers): how evenly the calls were spread.
        worker_cores = [round((cpu_s(child) - before) / wall, 2) for child, before in workers_before.items()]
        loop_cpu = sum(cpu_s(pid, thread=pid) for pid in loops) - loops_before
        server_rss = sum(rss_mb(pid) for pid in pids)
        client_cpu = time.process_time() - client_before
        after_load = loadavg()
        books = load.audit(service, log)
    finally:
        for process, _ in others:
            stop_server(process)
        service.stop()
    calls = sum(len(v) for v in log.latencies_ms.values())
    tools = {
        tool: {
            "calls": len(values),
            "p50_ms": round(percentile(values, 50), 1),
            "p95_ms": round(percentile(values, 95), 1),
        }
        for tool, values in sorted(log.latencies_ms.items())
    }
    every = [value for values in log.latencies_ms.values() for value in values]
    return {
        "server": server.label + (f", {processes} processes" if processes > 1 else ""),
        "client": client,
        "clients": clients,
        "calls": calls,
        "calls_per_s": round(calls / log.elapsed_s, 1),
        "p95_ms": round(percentile(every, 95), 1) if every else None,
        "tools": tools,
        "server_cpu_ms_per_call": round(server_cpu / max(calls, 1) * 1000, 2),
        "server_cores": round(server_cpu / wall, 2),
        "worker_cores": worker_cores,
        "loop_cpu_ms_per_call": round(loop_cpu / max(calls, 1) * 1000, 2),
        "client_cpu_ms_per_call": round(client_cpu / max(calls, 1) * 1000, 2),
        "server_rss_mb": server_rss,
        "client_cores": round(client_cpu / wall, 2),
        "errors": len(log.errors) + len(books.lost) + len(books.duplicated) + len(books.inconsistent),
        "error_samples": log.errors[:3] + books.lost[:3] + books.duplicated[:3] + books.inconsistent[:3],
        "loadavg": [before_load, after_load],
    }


async def _warm(service: Service) -> None:
    for user in USERS:
        async with connect(service.deployment, "http", "auto", user=user, client_name="warm") as client:
            for tool, arguments in calls_of(len(user), SEED_MEMORIES // 6, f"warm {user}"):
                await client.call_tool(tool, {**arguments, "project_hint": f"/srv/load/warm/{user}"})


# --- output ---------------------------------------------------------------------------------------


def show_layers(figures: dict[str, Any]) -> None:
    print("1. one call's layers, in process: mean CPU ms per call")
    tools = [name for name in figures if name not in ("shared", "eight at once")]
    rows = list(figures[tools[0]])
    print(f"  {'':<28}" + "".join(f"{name[:28]:>30}" for name in tools))
    for row in rows:
        print(f"  {row:<28}" + "".join(f"{figures[name][row]:>30.3f}" for name in tools))
    for name, value in figures["shared"].items():
        print(f"  {name:<28}{value:>30.3f}")
    print("  eight tasks at once, half remember and half recall, through the HTTP app in process:")
    print("    " + ", ".join(f"{name} {value}" for name, value in figures["eight at once"].items()))


def show_one_client(label: str, figures: dict[str, Any]) -> None:
    print(f"2. one client over HTTP, {label}: per call")
    print(f"  {'request':<15} {'p50 ms':>8} {'p95 ms':>8} {'server CPU ms':>14} {'client CPU ms':>14}")
    for name, row in figures.items():
        print(
            f"  {name:<15} {row['p50_ms']:>8} {row['p95_ms']:>8} {row['server_cpu_ms']:>14} {row['client_cpu_ms']:>14}"
        )


def show_load(row: dict[str, Any]) -> None:
    per_tool = ", ".join(f"{tool} {f['p50_ms']}/{f['p95_ms']}" for tool, f in row["tools"].items())
    print(
        f"3. {row['server']}, {row['clients']} {row['client']} clients: {row['calls_per_s']} calls/s, "
        f"p95 {row['p95_ms']} ms (p50/p95 ms: {per_tool}); server {row['server_cpu_ms_per_call']} ms CPU per call "
        f"(event loops {row['loop_cpu_ms_per_call']} ms), {row['server_cores']} cores"
        + (f" (workers {' + '.join(str(c) for c in row['worker_cores'])})" if row["worker_cores"] else "")
        + f", RSS {row['server_rss_mb']} MB; clients {row['client_cores']} cores, "
        f"{row['client_cpu_ms_per_call']} ms CPU per call; "
        f"errors {row['errors']}; "
        f"load average {row['loadavg'][0]} → {row['loadavg'][1]}",
        flush=True,
    )
    for problem in row["error_samples"]:
        print(f"  ! {problem}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=150, help="calls per measured step (parts 1 and 2)")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument(
        "--client", choices=("lean", "sdk"), default="lean", help="the load's clients: minimal HTTP, or the SDK's"
    )
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout whose server runs alongside")
    parser.add_argument("--workers", default="", help="comma-separated zm serve --workers values for part 3")
    parser.add_argument(
        "--processes", default="", help="comma-separated counts of zm serve processes on one data directory (part 3)"
    )
    parser.add_argument(
        "--server-env", action="append", default=[], metavar="NAME=VALUE", help="a variable for the servers only"
    )
    parser.add_argument("--skip", default="", help="comma-separated parts to skip: layers,one,load")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    skip = set(args.skip.split(","))
    extra = dict(item.split("=", 1) for item in args.server_env)
    servers = [Server("this checkout", extra)]
    if args.baseline is not None:
        baseline_env = {**extra, "PYTHONPATH": str(args.baseline.resolve() / "src")}
        servers.insert(0, Server(f"baseline {args.baseline}", baseline_env))
    out: dict[str, Any] = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version()}}
    print(f"{os.cpu_count()} CPUs, load average {loadavg()}", flush=True)
    if "layers" not in skip:
        out["layers"] = layers(args.calls)
        if not args.json:
            show_layers(out["layers"])
    out["one_client"], out["load"] = [], []
    for round_ in range(args.rounds):
        for server in servers:
            if "one" not in skip:
                figures = one_client(server, args.calls)
                out["one_client"].append({"server": server.label, "round": round_, "loadavg": loadavg(), **figures})
                if not args.json:
                    show_one_client(f"{server.label} (load average {loadavg()})", figures)
            if "load" not in skip:
                row = under_load(server, args.clients, args.seconds, round_, args.client)
                out["load"].append(row)
                if not args.json:
                    show_load(row)
        for processes in [int(n) for n in args.processes.split(",") if n]:
            row = under_load(servers[-1], args.clients, args.seconds, round_, args.client, processes)
            out["load"].append(row)
            if not args.json:
                show_load(row)
        for workers in [int(n) for n in args.workers.split(",") if n]:
            for server in servers:
                multi = Server(f"{server.label}, --workers {workers}", server.env, ("--workers", str(workers)))
                row = under_load(multi, args.clients, args.seconds, round_, args.client)
                out["load"].append(row)
                if not args.json:
                    show_load(row)
    if args.json:
        print(json.dumps(out, indent=2))
    clean = all(row["errors"] == 0 for row in out["load"])
    sys.exit(0 if clean else 1)


if __name__ == "__main__":
    main()
